export { startWebcamServer, type WebcamServer, type WebcamServerOptions } from './webcam-server.ts';
export { WEBCAM_SCRIPT, DEFAULT_WEBCAM_PORT, DEFAULT_CAMERA_SETTINGS } from './script-entry.ts';
export {
  SimulatedCamera,
  V4l2Camera,
  CameraError,
  findCaptureTool,
  findVideoDevices,
  captureCommand,
  CAPTURE_TOOLS,
  type CameraSource,
  type CameraSettings,
  type Frame,
} from './camera-source.ts';
export { JpegSplitter, looksLikeJpeg, MAX_JPEG_BYTES } from './jpeg-splitter.ts';
export {
  MjpegPartReader,
  boundaryOf,
  formatMjpegPart,
  mjpegContentType,
  MJPEG_BOUNDARY,
  CAPTURE_TIME_HEADER,
  type MjpegPart,
} from './mjpeg-parts.ts';
export { TestPattern, decodeJpeg } from './test-pattern.ts';
