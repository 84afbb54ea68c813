import { client, unwrap, type Operation } from '../api/client.ts';
import { canOperate } from '../lib/session.ts';
import { ConfirmButton } from './confirm.tsx';

export function isFinished(op: Operation): boolean {
  return op.status === 'succeeded' || op.status === 'failed' || op.status === 'cancelled';
}

/** "Cancel operation", confirmed first; only for a role that may and an operation still under way. */
export function CancelOperation({ operation, onCancelled }: { operation: Operation; onCancelled: (op: Operation) => void }) {
  if (!canOperate.value || isFinished(operation)) return null;
  return (
    <ConfirmButton
      label="Cancel operation"
      question={`Cancel operation #${operation.id} (${operation.kind})? What it has done so far is not undone.`}
      yes="Yes, cancel it"
      action={async () => onCancelled(await unwrap(client.POST('/api/operations/{id}/cancel/', { params: { path: { id: operation.id } } })))}
    />
  );
}
