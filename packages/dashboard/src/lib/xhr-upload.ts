import { authHeaders } from '../api/client.ts';
import { ApiProblem } from '../api/problem.ts';

/** A multipart POST (or PUT) with real upload progress (fetch has none in browsers; XHR has). */
export function postFormWithProgress<T>(url: string, form: FormData, onProgress: (loaded: number, total: number) => void, method: 'POST' | 'PUT' = 'POST'): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    for (const [k, v] of Object.entries(authHeaders())) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.total);
    xhr.onerror = () => reject(ApiProblem.network(new Error('the connection dropped')));
    xhr.onload = () => {
      const res = new Response(xhr.responseText, { status: xhr.status, headers: { 'content-type': xhr.getResponseHeader('content-type') ?? '' } });
      if (xhr.status >= 200 && xhr.status < 300) void res.json().then((d) => resolve(d as T), reject);
      else void ApiProblem.fromResponse(res).then(reject);
    };
    xhr.send(form);
  });
}
