import { ApiProblem } from '@mm/api-client';

export { ApiProblem, type FieldProblem } from '@mm/api-client';

/** What went wrong and what to do next. */
export interface Explanation {
  what: string;
  next: string;
}

const BY_CODE: Record<string, (p: ApiProblem) => Explanation> = {
  network_error: () => ({
    what: 'The control plane could not be reached.',
    next: 'Check your network connection and that the server is running, then try again.',
  }),
  invalid_credentials: () => ({ what: 'That username and password (or token) were not accepted.', next: 'Check them and sign in again.' }),
  unauthorized: () => ({ what: 'You are not signed in, or your session has ended.', next: 'Sign in again.' }),
  too_many_attempts: () => ({ what: 'Too many sign-in attempts.', next: 'Wait a minute before trying again.' }),
  forbidden: () => ({
    what: 'Your role does not allow this.',
    next: 'Ask an administrator to give you the operator or admin role, or to do it for you.',
  }),
  cross_origin: () => ({ what: 'The request was refused because it came from another site.', next: 'Open the dashboard from the server\'s own address.' }),
  board_offline: () => ({ what: 'The board is offline.', next: 'Check that the board is powered and its agent is running, then try again.' }),
  no_board: () => ({ what: 'No board is connected.', next: 'Register a board on the Boards page and start its agent.' }),
  board_required: () => ({ what: 'Several boards are registered.', next: 'Choose the board to use and try again.' }),
  board_timeout: () => ({ what: 'The board did not answer in time.', next: 'Check the board and its network, then try again.' }),
  script_unreachable: () => ({
    what: 'The device script is not running on the board.',
    next: 'Start the script on the board (its service), then try again.',
  }),
  // 400: no registered board has the labels; 409 (a health check run now): none of them is online.
  no_matching_board: (p) =>
    p.status === 409 && p.detail
      ? { what: p.detail, next: 'Start the agent of a matching board (Boards page), or change the labels.' }
      : { what: 'No registered board carries all of these labels.', next: 'Check the labels on the Boards page, or change the selector.' },
  no_health_check: () => ({
    what: 'No health check matches this board.',
    next: 'An administrator creates one on the Health checks page, with labels this board carries.',
  }),
  board_name_taken: () => ({ what: 'Another board already has this name.', next: 'Board names are unique: choose another name.' }),
  board_choice_conflict: () => ({ what: 'A run goes either to one board or to a selector, not both.', next: 'Choose one of the two and try again.' }),
  content_not_found: () => ({ what: 'The server does not hold that file yet.', next: 'Upload it.' }),
  checksum_mismatch: () => ({ what: 'The uploaded file was damaged on the way (its checksum did not match).', next: 'Upload it again.' }),
  validation_failed: (p) => ({
    what: p.errors.length ? p.errors.map((e) => `${e.field}: ${e.message}`).join('; ') : p.detail || 'Some fields are not valid.',
    next: 'Correct the field(s) named above and submit again.',
  }),
  invalid_parameter_file: (p) => ({
    what: p.errors.length ? `The parameter file is not a valid mm-runner file: ${p.errors.map((e) => `${e.field} ${e.message}`).join('; ')}.` : p.detail || 'The parameter file is not a valid mm-runner file.',
    next: 'Correct that field, or write the file with “Write mm-runner parameters…”, then upload it again.',
  }),
  payload_too_large: (p) => ({ what: p.detail || 'The file is larger than the server accepts.', next: 'Ask an administrator to raise MM_MAX_UPLOAD_BYTES, or use a smaller file.' }),
  webhook_url_refused: (p) => ({
    what: p.errors[0]?.message ? `The server will not send to this URL: ${p.errors[0].message}.` : p.detail,
    next: 'Use a receiver on a public address; for one on your own network, the server needs MM_WEBHOOK_ALLOW_PRIVATE=1.',
  }),
};

export function explain(err: unknown): Explanation {
  const p = err instanceof ApiProblem ? err : ApiProblem.network(err);
  const known = BY_CODE[p.code];
  if (known) return known(p);
  const what = p.detail || p.title;
  if (p.status === 401) return BY_CODE.unauthorized!(p);
  if (p.status === 403) return { what, next: 'Ask an administrator for a role that allows it.' };
  if (p.status === 404) return { what, next: 'It may have been deleted: go back to the list and reload.' };
  if (p.status === 409) return { what, next: 'Its state does not allow this right now: reload and check its status.' };
  if (p.status === 413) return BY_CODE.payload_too_large!(p);
  if (p.status === 502) return { what, next: 'The board ran it and it failed: open the operation to read its log.' };
  if (p.status === 503) return { what, next: 'Check that a board is registered and online on the Boards page.' };
  if (p.status === 504) return BY_CODE.board_timeout!(p);
  if (p.status >= 500) return { what, next: 'Try again in a moment; if it keeps failing, the server log has the details.' };
  return { what, next: 'Check what you entered and try again.' };
}
