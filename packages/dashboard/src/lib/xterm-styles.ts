/**
 * xterm.js under the server's Content-Security-Policy (`style-src 'self'`: no inline styles).
 *
 * Its DOM renderer writes part of its look (each cell's box, the theme's colours, the cursor
 * and selection, the scrollbar) into `<style>` elements it creates at run time. The browser
 * refuses those (and reports each refusal as a violation): the terminal would draw dark on
 * dark at the wrong size. Two pieces fix that without loosening the policy:
 *
 * - `captureStyleElements()`: while a terminal lives, `document.createElement('style')` gives
 *   xterm a `<template>` instead, marked as its style. xterm only sets its `textContent`,
 *   appends it and removes it; a template is never rendered and is not a style sheet, so the
 *   browser has nothing to refuse. (Blink checks the policy before a style element's `type`,
 *   so an inert `type` would still be reported.)
 * - `mirrorXtermStyles(root)`: the text of those elements under the terminal goes into one
 *   constructable stylesheet adopted by the document, again each time xterm rewrites them. A
 *   constructable sheet is CSSOM, not markup: the policy does not cover it.
 */
const MARK = 'data-xterm-style';
let holders = 0;

/** Starts the capture (counted: several terminals may live at once); call the result to stop it. */
export function captureStyleElements(): () => void {
  if (holders++ === 0) {
    const create = Document.prototype.createElement;
    // An own property of this document, shadowing the prototype's until it is deleted.
    document.createElement = function (this: Document, tag: string, options?: ElementCreationOptions) {
      if (tag.toLowerCase() !== 'style') return create.call(this, tag, options);
      const stand = create.call(this, 'template');
      stand.setAttribute(MARK, '');
      return stand;
    } as Document['createElement'];
  }
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    if (--holders === 0) Reflect.deleteProperty(document, 'createElement');
  };
}

/** Copies the captured style text under `root` into an adopted sheet, and keeps it current; call the result to stop. */
export function mirrorXtermStyles(root: HTMLElement): () => void {
  const sheet = new CSSStyleSheet();
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  let last = '';
  const sync = () => {
    const text = [...root.querySelectorAll(`template[${MARK}]`)].map((s) => s.textContent ?? '').join('\n');
    if (text === last) return;
    last = text;
    sheet.replaceSync(text);
  };
  const isStyle = (n: Node | null) => n instanceof Element && n.hasAttribute(MARK);
  // The renderer rewrites its rows all the time: only changes touching a style element count.
  const observer = new MutationObserver((records) => {
    if (records.some((r) => isStyle(r.target) || isStyle(r.target.parentNode) || [...r.addedNodes].some(isStyle) || [...r.removedNodes].some(isStyle))) sync();
  });
  observer.observe(root, { childList: true, subtree: true, characterData: true });
  sync();
  return () => {
    observer.disconnect();
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== sheet);
  };
}
