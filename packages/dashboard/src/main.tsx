import { render } from 'preact';
import { App } from './app.tsx';
import { prefetchInvocations } from './pages/invocations.tsx';
import './styles.css';
import './forms.css';

// The landing page's list is asked for at once, alongside the session check.
if (location.pathname === '/' || location.pathname.replace(/\/+$/, '') === '/invocations') prefetchInvocations(location.search);

render(<App />, document.getElementById('app')!);
