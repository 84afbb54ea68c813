import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';
import { ErrorBox } from './error-box.tsx';

/**
 * The one way a destructive action asks first (delete, cancel, PAC activation, role change):
 * the question in words, "Yes, <verb>" and "Keep it", inline where the action was asked for.
 * The action's error, if any, is shown in place; `onClose` runs when it is done or declined.
 */
export function Confirm({ question, yes, onYes, onClose }: { question: ComponentChildren; yes: string; onYes: () => Promise<void>; onClose: () => void }) {
  const id = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return (
    <div role="alertdialog" aria-labelledby={id} class="confirm">
      <span id={id}>{question}</span>
      <div class="row wrap">
        <button
          type="button"
          class="danger"
          autoFocus
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            setError(null);
            try {
              await onYes();
              onClose();
            } catch (err) {
              setError(err);
            } finally {
              setBusy(false);
            }
          }}
        >
          {yes}
        </button>
        <button type="button" onClick={onClose} disabled={busy}>
          Keep it
        </button>
      </div>
      <ErrorBox error={error} />
    </div>
  );
}

/** A button whose action is confirmed first (see Confirm). */
export function ConfirmButton({
  label,
  question,
  yes,
  action,
  disabled,
  primary = false,
}: {
  label: ComponentChildren;
  question: ComponentChildren;
  yes: string;
  action: () => Promise<void>;
  disabled?: boolean;
  /** Not a red button (e.g. "Activate"): the question still says what it does. */
  primary?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (asking) return <Confirm question={question} yes={yes} onYes={action} onClose={() => setAsking(false)} />;
  return (
    <button type="button" class={primary ? undefined : 'danger'} disabled={disabled} onClick={() => setAsking(true)}>
      {label}
    </button>
  );
}
