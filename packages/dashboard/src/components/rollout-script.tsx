import { client, unwrap } from '../api/client.ts';
import { useResource } from '../lib/use-resource.ts';
import { Link } from './link.tsx';

/**
 * The device script a `script_deploy` rollout deploys, by name and version (issue 39: the
 * page showed the raw `script_id`). A deleted entry still shows its id.
 */
export function RolloutScript({ scriptId }: { scriptId: string }) {
  const { data, error } = useResource(() => unwrap(client.GET('/api/device-scripts/{id}/', { params: { path: { id: scriptId } } })), [scriptId]);
  return (
    <span data-testid="rollout-script">
      {data ? (
        <>
          <Link href={`/device-scripts/${scriptId}`}>{data.name}</Link> <span class="muted">version {data.version}</span>
        </>
      ) : error ? (
        <span class="muted" title={scriptId}>
          a deleted device script ({scriptId.slice(0, 8)}…)
        </span>
      ) : (
        '…'
      )}
    </span>
  );
}
