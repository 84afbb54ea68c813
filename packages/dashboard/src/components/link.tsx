import type { ComponentChildren, JSX } from 'preact';
import { currentPath, navigate } from '../lib/router.ts';

/** An in-app link: a real `<a href>` (keyboard, middle-click, copy) that routes without reloading. */
export function Link({ href, children, ...rest }: { href: string; children: ComponentChildren } & JSX.HTMLAttributes<HTMLAnchorElement>) {
  return (
    <a
      href={href}
      {...rest}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

export function NavLink({ href, children }: { href: string; children: ComponentChildren }) {
  const active = currentPath.value === href || currentPath.value.startsWith(href + '/');
  return (
    <Link href={href} aria-current={active ? 'page' : undefined}>
      {children}
    </Link>
  );
}
