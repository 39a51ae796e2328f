/** The console's entry: esbuild bundles this file (and styles.css) when the service first serves /console. */
import { render } from 'preact';
import { App } from './app.tsx';
import './styles.css';

render(<App />, document.getElementById('app')!);
