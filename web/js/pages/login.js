import { authPanel } from '../auth.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';

// A path of this site: one slash, then anything but a second slash or a backslash (which browsers
// read as a slash). "//host/x" and "/\\host/x" are other sites' addresses.
const SITE_PATH = /^\/(?![/\\])/;
// Backslashes, and control characters, which the URL parser drops ("/\t/host" is "//host").
const SUSPICIOUS = /[\\\u0000-\u001f\u007f]/;

/** Where to go after signing in: `next` only when it is a single-slash path of this site and still
 * is one once resolved (dot segments such as `/.//host` or `/%2e//host` resolve to `//host`, which
 * the browser would take for another site). Anything else lands on the lobby. */
export function safeNext(next) {
  if (typeof next !== 'string' || !SITE_PATH.test(next) || SUSPICIOUS.test(next)) return '/#/';
  let target;
  try {
    target = new URL(next, location.origin);
  } catch {
    return '/#/';
  }
  if (target.origin !== location.origin) return '/#/';
  const path = target.pathname + target.search + target.hash;
  return SITE_PATH.test(path) ? path : '/#/';
}

export function mount(root) {
  const back = new URLSearchParams(location.hash.split('?')[1] || '').get('next');
  function render() {
    root.replaceChildren(
      h(
        'div',
        { class: 'page narrow' },
        h('h1', { text: t('auth.title') }),
        authPanel({ onDone: () => location.assign(safeNext(back)) }),
      ),
    );
  }
  render();
  return { relabel: render };
}
