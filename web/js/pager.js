// Previous / next for a paged list (history, leaderboard).
import { h } from './dom.js';
import { t } from './i18n.js';

/** The pager for page `page` of `pages`, or null when there is one page; `go(page)` turns it. */
export function pager(page, pages, go) {
  if (pages <= 1) return null;
  return h(
    'nav',
    { class: 'pager', 'aria-label': t('common.pages') },
    h('button', { type: 'button', class: 'btn small', disabled: page <= 1, onclick: () => go(page - 1), text: t('common.previous') }),
    h('span', { text: t('common.page_of', { page, pages }) }),
    h('button', { type: 'button', class: 'btn small', disabled: page >= pages, onclick: () => go(page + 1), text: t('common.next') }),
  );
}
