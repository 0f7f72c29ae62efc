// A read-only link with a copy button.
import { h, uid } from './dom.js';
import { t } from './i18n.js';
import { toast } from './toast.js';

export async function copyText(text, input) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    if (input) {
      input.select();
      document.execCommand('copy');
    }
  }
  toast(t('common.copied'));
}

export function linkField(label, url, id) {
  const inputId = id || uid('link');
  const input = h('input', { id: inputId, class: 'link-input', readonly: true, value: url, onfocus: (event) => event.target.select() });
  return h(
    'div',
    { class: 'link-field' },
    h('label', { class: 'field-label', for: inputId, text: label }),
    h(
      'div',
      { class: 'link-row' },
      input,
      h('button', {
        type: 'button',
        class: 'btn small',
        'aria-label': `${t('common.copy')}: ${label}`,
        dataset: { copy: inputId },
        onclick: () => copyText(url, input),
        text: t('common.copy'),
      }),
    ),
  );
}

/** The spectator link of a table this browser created (the invite page cannot ask the server for it). */
export function rememberWatchUrl(code, url) {
  try {
    localStorage.setItem(`durak.watch.${code}`, url);
  } catch {
    /* storage unavailable */
  }
}

export function watchUrlFor(code) {
  try {
    return localStorage.getItem(`durak.watch.${code}`);
  } catch {
    return null;
  }
}
