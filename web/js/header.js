// The site header: brand, navigation, language switcher, user name and balance.
import { h } from './dom.js';
import { LANGUAGES, formatNumber, language, setLanguage, t } from './i18n.js';
import { currentUser, logOut, onUserChange } from './session.js';

let activeRoute = 'lobby';
onUserChange(() => renderHeader(activeRoute));

function languageName(code) {
  switch (code) {
    case 'ru':
      return t('language.ru');
    case 'az':
      return t('language.az');
    case 'et':
      return t('language.et');
    case 'fi':
      return t('language.fi');
    default:
      return t('language.en');
  }
}

export function renderHeader(route) {
  activeRoute = route;
  const header = document.getElementById('site-header');
  const me = currentUser();
  // The integrity review is a part of the admin pages: the Admin link stays marked there.
  const current = route === 'integrity' ? 'admin' : route;
  const link = (href, name, text) =>
    h('a', { href, class: ['nav-link', current === name && 'active'], 'aria-current': current === name ? 'page' : null, text });
  const nav = h(
    'nav',
    { class: 'site-nav', 'aria-label': t('nav.label') },
    link('/#/', 'lobby', t('nav.lobby')),
    link('/#/create', 'create', t('nav.create')),
    link('/#/leaderboard', 'leaderboard', t('nav.leaderboard')),
    me && me.kind === 'account' ? link('/#/history', 'history', t('nav.history')) : null,
    me && me.kind === 'account' ? link('/#/friends', 'friends', t('nav.friends')) : null,
    me && me.is_admin ? link('/#/admin', 'admin', t('nav.admin')) : null,
  );
  const select = h(
    'select',
    {
      class: 'lang-select',
      id: 'lang-select',
      'aria-label': t('language.label'),
      onchange: (event) => setLanguage(event.target.value),
    },
    LANGUAGES.map((code) => h('option', { value: code, selected: code === language(), text: languageName(code) })),
  );
  let user;
  if (me) {
    user = h(
      'div',
      { class: 'user-box' },
      me.kind === 'account'
        ? h('a', { class: 'user-name', id: 'user-name', href: `/#/u/${encodeURIComponent(me.name)}`, text: me.name })
        : h('span', { class: 'user-name', id: 'user-name', text: me.name }),
      me.kind === 'account'
        ? h(
            'span',
            { class: 'balance', id: 'balance', 'aria-label': t('header.balance_label', { coins: formatNumber(me.balance ?? 0) }), dataset: { balance: String(me.balance ?? 0) } },
            h('span', { class: 'coin', 'aria-hidden': 'true' }),
            h('span', { text: formatNumber(me.balance ?? 0) }),
          )
        : h('span', { class: 'badge guest', id: 'guest-badge', text: t('header.guest') }),
      h('button', { class: 'btn small ghost', type: 'button', id: 'logout', onclick: () => logOut().then(() => location.assign('/#/')), text: t('header.logout') }),
    );
  } else {
    user = h('div', { class: 'user-box' }, h('a', { class: 'btn small', href: '/#/login', id: 'login-link', text: t('header.login') }));
  }
  header.replaceChildren(
    h(
      'div',
      { class: 'header-inner' },
      h('a', { class: 'brand', href: '/#/' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true', text: '\u2660' }), h('span', { text: t('app.name') })),
      nav,
      h('div', { class: 'header-tools' }, select, user),
    ),
  );
}

/** During a match the header is a slim bar (<= 48 px): one line, the brand as its mark only. */
export function setSlimHeader(slim) {
  document.body.classList.toggle('in-match', slim);
}
