import { useState } from 'preact/hooks';
import { client, unwrap } from '../api/client.ts';
import { useResource } from '../lib/use-resource.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { formatBytes, formatTime } from '../lib/format.ts';
import { DataTable } from '../components/table-box.tsx';

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
        <DataTable label="Videos" columns={['Name', 'Source', 'Size', 'Modified', '']}>
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
        </DataTable>
      )}
    </section>
  );
}
