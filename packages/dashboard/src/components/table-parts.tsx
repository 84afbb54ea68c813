/** A table's header row: one column heading each, and a last, visually hidden "Actions" column when asked. */
export function TableHead({ columns, actions = false }: { columns: string[]; actions?: boolean }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th key={c} scope="col">
            {c}
          </th>
        ))}
        {actions && (
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}

/** A button that asks first, runs, then reports: done, or the error. `name` tells screen readers which row. */
export function ConfirmButton(props: { label: string; name: string; question: string; kind?: 'danger' | 'primary'; run: () => Promise<unknown>; onDone: () => void; onError: (err: unknown) => void }) {
  return (
    <button
      type="button"
      class={props.kind ?? 'danger'}
      onClick={async () => {
        if (props.question && !confirm(props.question)) return;
        try {
          await props.run();
          props.onDone();
        } catch (err) {
          props.onError(err);
        }
      }}
    >
      {props.label} <span class="visually-hidden">{props.name}</span>
    </button>
  );
}

/** A form's submit: no page load; runs with the form's data, clears the form when it worked, reports the error when not. */
export function submitting(run: (form: FormData) => Promise<void>, onError: (err: unknown) => void) {
  return async (e: Event) => {
    e.preventDefault();
    const formEl = e.currentTarget as HTMLFormElement;
    try {
      await run(new FormData(formEl));
      formEl.reset();
    } catch (err) {
      onError(err);
    }
  };
}
