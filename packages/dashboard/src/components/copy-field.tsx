import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';

/** A value to copy (a token shown once, a command): read-only, selected on focus, with a Copy button. */
export function CopyField({ label, value, testId, rows }: { label: string; value: string; testId?: string; rows?: number }) {
  const id = useId();
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const select = (e: Event) => (e.target as HTMLInputElement | HTMLTextAreaElement).select();
  return (
    <div class="stack copy-field">
      <label for={id}>{label}</label>
      <div class="row">
        {rows ? (
          <textarea id={id} readOnly rows={rows} value={value} data-testid={testId} onFocus={select} />
        ) : (
          <input id={id} readOnly value={value} data-testid={testId} onFocus={select} />
        )}
        <button
          type="button"
          onClick={() =>
            void (navigator.clipboard?.writeText(value) ?? Promise.reject(new Error('no clipboard'))).then(
              () => setCopied('yes'),
              () => setCopied('no'),
            )
          }
        >
          Copy <span class="visually-hidden">{label}</span>
        </button>
      </div>
      <span class="small muted" aria-live="polite">
        {copied === 'yes' ? 'Copied.' : copied === 'no' ? 'This browser did not allow copying: select the text and copy it.' : ''}
      </span>
    </div>
  );
}

/** A secret shown this once (a new token, a generated password): what to do with it, Copy, and Done. */
export function ShownOnce({ title, label, value, testId, onDone }: { title: ComponentChildren; label: string; value: string; testId: string; onDone: () => void }) {
  return (
    <div class="card stack" role="status">
      <strong>{title}</strong>
      <CopyField label={label} value={value} testId={testId} />
      <div>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
