import { authPanel } from '../auth.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';

/** Where to go after signing in: `next` only when it resolves to a page of this site (so
 * `//other.host/x`, `/\other.host/x` and `https://other.host` all land on the lobby instead). */
export function safeNext(next) {
  if (!next) return '/#/';
  let target;
  try {
    target = new URL(next, location.origin);
  } catch {
    return '/#/';
  }
  if (target.origin !== location.origin) return '/#/';
  return target.pathname + target.search + target.hash;
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
