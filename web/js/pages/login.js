import { authPanel } from '../auth.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';

export function mount(root) {
  const back = new URLSearchParams(location.hash.split('?')[1] || '').get('next');
  function render() {
    root.replaceChildren(
      h(
        'div',
        { class: 'page narrow' },
        h('h1', { text: t('auth.title') }),
        authPanel({ onDone: () => location.assign(back && back.startsWith('/') ? back : '/#/') }),
      ),
    );
  }
  render();
  return { relabel: render };
}
