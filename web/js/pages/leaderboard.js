// The leaderboard: the 100 best players with at least 5 rated matches, a page at a time.
import { errorText, get } from '../api.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { pager } from '../pager.js';

const PAGE_SIZE = 25;

export function mount(root) {
  let page = 1;
  let data = null;
  let error = '';
  let token = 0;

  async function load() {
    const ticket = ++token;
    try {
      const result = await get(`/api/leaderboard?page=${page}&page_size=${PAGE_SIZE}`);
      if (ticket !== token) return;
      data = result;
      error = '';
    } catch (failure) {
      error = errorText(failure);
    }
    render();
  }

  function row(item) {
    return h(
      'tr',
      { class: 'leader-row', dataset: { name: item.name } },
      h('td', { 'data-label': t('leaderboard.rank'), class: 'rank', text: String(item.rank) }),
      h('td', { 'data-label': t('leaderboard.player') }, h('a', { href: `/#/u/${encodeURIComponent(item.name)}`, text: item.name })),
      h('td', { 'data-label': t('leaderboard.rating'), class: 'rating', text: String(item.rating) }),
      h('td', { 'data-label': t('leaderboard.matches'), text: String(item.matches) }),
    );
  }

  function render() {
    const body = [h('p', { class: 'muted', text: t('leaderboard.explain') })];
    if (error) body.push(h('p', { class: 'form-error', role: 'alert', text: error }));
    else if (!data) body.push(h('p', { class: 'muted', text: t('common.loading') }));
    else if (!data.items.length) body.push(h('p', { class: 'empty-state', text: t('leaderboard.none') }));
    else {
      body.push(
        h(
          'table',
          { class: 'data-table leaderboard-table', id: 'leaderboard' },
          h('caption', { class: 'visually-hidden', text: t('leaderboard.title') }),
          h('thead', {}, h('tr', {}, [t('leaderboard.rank'), t('leaderboard.player'), t('leaderboard.rating'), t('leaderboard.matches')].map((text) => h('th', { scope: 'col', text })))),
          h('tbody', {}, data.items.map(row)),
        ),
      );
      const pages = Math.max(1, Math.ceil(data.total / data.page_size));
      body.push(pager(page, pages, (to) => { page = to; load(); }));
    }
    root.replaceChildren(h('div', { class: 'page' }, h('h1', { text: t('leaderboard.title') }), h('section', { class: 'panel' }, body)));
  }

  render();
  load();
  return { relabel: render };
}
