// My matches: date, parameters, place, coin change; each links to its replay.
import { errorText, get } from '../api.js';
import { h } from '../dom.js';
import { formatDate, formatSigned, t } from '../i18n.js';
import { pager } from '../pager.js';
import { rulesChips } from '../rules.js';
import { namesWithBadges } from '../table/render.js';
import { currentUser, onSignInChange } from '../session.js';

const PAGE_SIZE = 20;

export function mount(root) {
  let page = 1;
  let data = null;
  let details = {};
  let error = '';
  let token = 0;

  async function load() {
    const ticket = ++token;
    const me = currentUser();
    if (!me || me.kind !== 'account') {
      render();
      return;
    }
    try {
      const result = await get(`/api/matches?account=me&page=${page}&page_size=${PAGE_SIZE}`);
      // The list has no rules; each match's detail has them.
      const found = await Promise.all(result.items.map((item) => get(`/api/matches/${encodeURIComponent(item.id)}`).catch(() => null)));
      if (ticket !== token) return;
      data = result;
      details = Object.fromEntries(found.filter(Boolean).map((detail) => [detail.id, detail]));
      error = '';
    } catch (failure) {
      error = errorText(failure);
    }
    render();
  }

  function row(item, me) {
    const mine = item.seats.find((seat) => seat.account_id === me.id);
    const detail = details[item.id];
    const durak = mine && !item.draw && item.durak === mine.seat;
    let result;
    if (item.aborted) result = t('history.aborted');
    else if (item.draw) result = t('history.draw');
    else if (durak) result = t('history.durak');
    else if (mine && mine.place === 1) result = t('history.won');
    else result = t('history.safe');
    const change = (mine && mine.coin_change) || 0; // the server gives each player his own coin result
    return h(
      'tr',
      { class: ['match-row', durak && 'lost'], dataset: { match: item.id } },
      h('td', { 'data-label': t('history.date') }, h('time', { datetime: item.finished_at, text: formatDate(item.finished_at) })),
      h('td', { 'data-label': t('history.rules') }, detail ? rulesChips(detail.rules, { compact: false }) : null),
      h('td', { 'data-label': t('history.players') }, namesWithBadges(item.seats)),
      h(
        'td',
        { 'data-label': t('history.place') },
        h('span', { class: 'place', text: mine && mine.place ? t('results.place', { place: mine.place }) : '\u2014' }),
        ' ',
        h('span', { class: 'muted', text: result }),
        mine && mine.rating !== null && mine.rating !== undefined ? h('span', { class: 'rating-after', text: ` · ${t('history.rating_after', { rating: mine.rating, change: formatSigned(mine.rating_change) })}` }) : null,
      ),
      h('td', { 'data-label': t('history.coins') }, h('span', { class: ['coins', change > 0 ? 'up' : change < 0 ? 'down' : 'even'], dataset: { change: String(change) }, text: formatSigned(change) })),
      h('td', {}, h('a', { class: 'btn small', href: `/#/replay/${encodeURIComponent(item.id)}`, text: t('history.replay') })),
    );
  }

  function render() {
    if (gone) return; // another page took the screen: a late answer draws nothing
    const me = currentUser();
    const body = [];
    if (!me || me.kind !== 'account') {
      body.push(h('p', { class: 'notice', text: t('history.accounts_only') }), h('a', { class: 'btn primary', href: '/#/login', text: t('header.login') }));
    } else if (error) {
      body.push(h('p', { class: 'form-error', role: 'alert', text: error }));
    } else if (!data) {
      body.push(h('p', { class: 'muted', text: t('common.loading') }));
    } else if (!data.items.length) {
      body.push(h('p', { class: 'empty-state', text: t('history.none') }));
    } else {
      body.push(
        h(
          'table',
          { class: 'data-table history-table', id: 'history' },
          h('caption', { class: 'visually-hidden', text: t('history.title') }),
          h(
            'thead',
            {},
            h('tr', {}, [t('history.date'), t('history.rules'), t('history.players'), t('history.place'), t('history.coins'), ''].map((text) => h('th', { scope: 'col', text }))),
          ),
          h('tbody', {}, data.items.map((item) => row(item, me))),
        ),
      );
      const pages = Math.max(1, Math.ceil(data.total / data.page_size));
      body.push(pager(page, pages, (to) => { page = to; load(); }));
    }
    root.replaceChildren(h('div', { class: 'page' }, h('h1', { text: t('history.title') }), h('section', { class: 'panel' }, body)));
  }

  let gone = false;
  render();
  load();
  const off = onSignInChange(() => load());
  return {
    relabel: render,
    unmount: () => {
      gone = true;
      off();
    },
  };
}
