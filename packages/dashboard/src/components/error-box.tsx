import { explain } from '../api/problem.ts';

/** An API error in words, with what to do next. `role="alert"` so screen readers announce it. */
export function ErrorBox({ error, onDismiss }: { error: unknown; onDismiss?: () => void }) {
  if (!error) return null;
  const { what, next } = explain(error);
  return (
    <div class="error" role="alert">
      <p>
        <strong>{what}</strong>
      </p>
      <p>{next}</p>
      {onDismiss && (
        <button type="button" class="link" onClick={onDismiss}>
          Dismiss
        </button>
      )}
    </div>
  );
}

/** A page a role may not use: said plainly instead of an empty page or a failing button. */
export function NotAllowed({ need }: { need: 'operator' | 'admin' }) {
  return (
    <div class="error" role="alert">
      <p>
        <strong>This needs the {need} role.</strong>
      </p>
      <p>You are signed in with a role that cannot do this. Ask an administrator to change your role, or to do it for you.</p>
    </div>
  );
}
