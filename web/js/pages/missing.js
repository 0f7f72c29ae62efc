import { h } from '../dom.js';
import { t } from '../i18n.js';

export function mount(root) {
  const render = () =>
    root.replaceChildren(
      h('div', { class: 'page narrow' }, h('h1', { text: t('missing.title') }), h('p', {}, h('a', { href: '/#/', text: t('missing.back') }))),
    );
  render();
  return { relabel: render };
}
