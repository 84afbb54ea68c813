/**
 * What the control plane needs of this package, without the JPEG encoder (jpeg-js stays out
 * of the server's bundle and its dependencies): the catalogue entry and MJPEG frame parsing.
 */
export { WEBCAM_SCRIPT, DEFAULT_WEBCAM_PORT } from './script-entry.ts';
export { looksLikeJpeg, MAX_JPEG_BYTES } from './jpeg-splitter.ts';
export { MjpegPartReader, boundaryOf, CAPTURE_TIME_HEADER, MJPEG_BOUNDARY, type MjpegPart } from './mjpeg-parts.ts';
