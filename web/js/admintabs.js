// The admin pages' tabs: accounts and reports (/#/admin), fair-play flags (/#/admin/integrity).
import { h } from './dom.js';
import { t } from './i18n.js';

export function adminTabs(active) {
  const tab = (href, name, text) =>
    h('a', { href, class: ['tab', active === name && 'active'], 'aria-current': active === name ? 'page' : null, dataset: { tab: name }, text });
  return h(
    'nav',
    { class: 'tabs admin-tabs', 'aria-label': t('admin.sections') },
    tab('/#/admin', 'accounts', t('admin.tab_accounts')),
    tab('/#/admin/integrity', 'integrity', t('admin.tab_integrity')),
  );
}
