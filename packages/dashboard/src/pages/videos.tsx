import { useState } from 'preact/hooks';
import { client, unwrap } from '../api/client.ts';
import { useResource } from '../lib/use-resource.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { formatBytes, formatTime } from '../lib/format.ts';
import { TableBox } from '../components/table-box.tsx';

export function VideosPage() {
  const [playing, setPlaying] = useState<string | null>(null);
  const { data, error } = useResource(() => unwrap(client.GET('/api/videos/', { params: { query: { limit: 1000 } } })), []);
  const videos = data?.videos;
  return (
    <section aria-labelledby="videos-title" class="stack">
      <h1 id="videos-title">Videos</h1>
      <ErrorBox error={error} />
      {videos && videos.length === 0 && <p>No videos yet: invocation outputs and the results folder's videos appear here.</p>}
      {videos && videos.length > 0 && (
        <TableBox label="Videos">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Source</th>
              <th scope="col">Size</th>
              <th scope="col">Modified</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {videos.map((v) => (
              <>
                <tr key={v.url}>
                  <td>{v.source === 'invocation' && v.invocation_id ? <Link href={`/invocations/${v.invocation_id}`}>{v.name}</Link> : v.name}</td>
                  <td>{v.source === 'invocation' ? 'invocation output' : 'results folder'}</td>
                  <td>{formatBytes(v.size)}</td>
                  <td>{formatTime(v.modified_at)}</td>
                  <td>
                    <div class="row">
                      <button type="button" aria-expanded={playing === v.url} onClick={() => setPlaying(playing === v.url ? null : v.url)}>
                        {playing === v.url ? 'Close' : 'Play'} <span class="visually-hidden">{v.name}</span>
                      </button>
                      <a href={v.url} download={v.filename}>
                        Download <span class="visually-hidden">{v.name}</span>
                      </a>
                    </div>
                  </td>
                </tr>
                {playing === v.url && (
                  <tr key={`${v.url}-player`}>
                    <td colSpan={5}>
                      <video controls autoPlay muted src={v.url} aria-label={v.name} />
                    </td>
                  </tr>
                )}
              </>
            ))}
          </tbody>
        </table>
        </TableBox>
      )}
    </section>
  );
}
