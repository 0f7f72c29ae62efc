// Admin: search accounts, read a ledger, adjust a balance with a reason, reset a player's password.
import { adminTabs } from '../admintabs.js';
import { ApiError, errorText, get, post } from '../api.js';
import { h } from '../dom.js';
import { formatDate, formatNumber, formatSigned, t } from '../i18n.js';
import { currentUser, onSignInChange, refreshMe } from '../session.js';
import { phraseText } from '../table/chat.js';
import { toast } from '../toast.js';

function ledgerReason(reason) {
  switch (reason) {
    case 'signup_grant':
      return t('ledger.signup_grant');
    case 'stake':
      return t('ledger.stake');
    case 'payout':
      return t('ledger.payout');
    case 'refund':
      return t('ledger.refund');
    case 'admin_adjustment':
      return t('ledger.admin_adjustment');
    case 'match_reversal':
      return t('ledger.match_reversal');
    default:
      return reason;
  }
}

export function mount(root) {
  let query = '';
  let accounts = null;
  let selected = null;
  let ledger = null;
  let error = '';
  let adjustError = '';
  const draft = { amount: '', reason: '' }; // survives re-renders
  let resetError = '';
  let resetReason = '';
  let temporary = null; // {name, password}: shown once, until another account is opened
  let reports = null; // GET /api/admin/reports: player reports with the chat lines, newest first

  async function loadReports() {
    try {
      reports = (await get('/api/admin/reports?page_size=50')).items;
    } catch (err) {
      error = errorText(err);
    }
    render();
  }

  /** The reports, each with its reason, the recent chat lines (as text) and a link to the match. */
  function reportsPanel() {
    if (reports === null) return null;
    return h(
      'section',
      { class: 'panel reports', id: 'reports' },
      h('h2', { text: t('admin.reports_title') }),
      reports.length
        ? h(
            'ul',
            { class: 'report-list' },
            reports.map((report) =>
              h(
                'li',
                { class: 'report', dataset: { report: String(report.id) } },
                h('p', {}, h('strong', { text: t('admin.report_by', { reporter: report.reporter.name, reported: report.reported.name }) }), ' ', h('span', { class: 'muted', text: formatDate(report.created_at) })),
                h('p', { class: 'report-reason', text: t('admin.report_reason', { reason: report.reason }) }),
                report.match_id
                  ? h('a', { class: 'btn small', href: `/#/replay/${encodeURIComponent(report.match_id)}`, text: t('admin.report_match') })
                  : h('span', { class: 'muted', text: t('admin.report_table', { code: report.table_code.slice(0, 8) }) }),
                h(
                  'details',
                  {},
                  h('summary', { text: t('admin.report_lines') }),
                  h(
                    'ol',
                    { class: 'report-lines' },
                    report.lines.map((line) =>
                      h('li', { class: line.from.player === report.reported.key ? 'reported' : null }, h('strong', { text: `${line.from.name}: ` }), line.key ? phraseText(line.key) : line.text),
                    ),
                  ),
                ),
              ),
            ),
          )
        : h('p', { class: 'muted', text: t('admin.reports_empty') }),
    );
  }

  let searches = 0; // only the latest search draws: the first list, answered late, hid a search's result

  async function search() {
    const mine = ++searches;
    error = '';
    try {
      const page = await get(`/api/admin/accounts?q=${encodeURIComponent(query)}&page_size=50`);
      if (mine !== searches) return;
      accounts = page.items;
    } catch (failure) {
      if (mine !== searches) return;
      error = errorText(failure);
    }
    render();
  }

  async function open(account) {
    if (!selected || selected.id !== account.id) {
      Object.assign(draft, { amount: '', reason: '' });
      resetReason = '';
      temporary = null;
    }
    resetError = '';
    selected = account;
    ledger = null;
    adjustError = '';
    render();
    try {
      ledger = await get(`/api/admin/accounts/${account.id}/ledger?page_size=100`);
    } catch (failure) {
      error = errorText(failure);
    }
    render();
  }

  async function adjust(event) {
    event.preventDefault();
    const form = event.target;
    const amount = Number(form.amount.value);
    const reason = form.reason.value.trim();
    adjustError = '';
    if (!Number.isInteger(amount) || amount === 0) adjustError = t('admin.amount_invalid');
    else if (!reason) adjustError = t('admin.reason_required');
    if (adjustError) {
      render();
      return;
    }
    try {
      const key = `adj-${Date.now()}-${Math.random().toString(36).slice(2, 10)}`;
      const result = await post(`/api/admin/accounts/${selected.id}/adjust`, { amount, reason }, { 'Idempotency-Key': key });
      toast(t('admin.adjusted', { name: selected.name, balance: formatNumber(result.balance) }));
      selected = { ...selected, balance: result.balance };
      draft.amount = '';
      draft.reason = '';
      if (accounts) accounts = accounts.map((account) => (account.id === selected.id ? selected : account));
      refreshMe();
      await open(selected);
      return;
    } catch (failure) {
      // Taking more coins than the account holds: the ledger's insufficient_funds, said for this form.
      adjustError = failure instanceof ApiError && failure.code === 'insufficient_funds' ? t('admin.below_zero') : errorText(failure);
    }
    render();
  }

  async function resetPassword(event) {
    event.preventDefault();
    const reason = event.target.reason.value.trim();
    resetError = reason ? '' : t('admin.reason_required');
    if (!resetError) {
      try {
        const result = await post(`/api/admin/accounts/${selected.id}/password-reset`, { reason });
        temporary = { name: result.name, password: result.temporary_password };
        resetReason = '';
      } catch (failure) {
        resetError = errorText(failure);
      }
    }
    render();
  }

  let gone = false; // another page took the screen: a late answer draws nothing
  // The page's parts, built once: an answer (a search, a ledger, the reports) replaces the lists
  // around the forms, never a form (what is typed in it, and the focus, stay).
  let view = null; // {page, searchForm, errorSlot, listSlot, detailSlot, reportsSlot}
  let detail = null; // {id, section, balance, frozen, adjustError, resetError, resetResult, ledgerSlot}

  function accountList() {
    if (!accounts) return null;
    return h(
      'ul',
      { class: 'account-list', id: 'accounts' },
      accounts.length
        ? accounts.map((account) =>
            h(
              'li',
              {},
              h(
                'button',
                { type: 'button', class: ['account', selected && selected.id === account.id && 'active'], dataset: { account: account.name }, onclick: () => open(account) },
                h('span', { class: 'name', text: account.name }),
                account.role === 'admin' ? h('span', { class: 'badge', text: t('admin.role_admin') }) : null,
                account.frozen ? h('span', { class: 'badge frozen', title: account.frozen, text: t('integrity.frozen_badge') }) : null,
                h('span', { class: 'balance-small', text: t('admin.balance', { coins: formatNumber(account.balance ?? 0) }) }),
              ),
            ),
          )
        : h('li', { class: 'muted', text: t('admin.none') }),
    );
  }

  function ledgerTable() {
    if (!ledger) return h('p', { class: 'muted', text: t('common.loading') });
    return h(
      'table',
      { class: 'data-table ledger', id: 'ledger' },
      h('caption', { text: t('admin.ledger_of', { name: selected.name, balance: formatNumber(ledger.balance) }) }),
      h('thead', {}, h('tr', {}, [t('admin.when'), t('admin.reason'), t('admin.amount'), t('admin.after')].map((text) => h('th', { scope: 'col', text })))),
      h(
        'tbody',
        {},
        ledger.items.map((entry) =>
          h(
            'tr',
            {},
            h('td', { 'data-label': t('admin.when'), text: formatDate(entry.created_at) }),
            h('td', { 'data-label': t('admin.reason'), text: entry.memo ? `${ledgerReason(entry.reason)}: ${entry.memo}` : ledgerReason(entry.reason) }),
            h('td', { 'data-label': t('admin.amount') }, h('span', { class: ['coins', entry.amount > 0 ? 'up' : 'down'], text: formatSigned(entry.amount) })),
            h('td', { 'data-label': t('admin.after'), text: formatNumber(entry.balance_after) }),
          ),
        ),
      ),
    );
  }

  /** The selected account's section, built when another account is opened. */
  function buildDetail() {
    const adjustError = h('p', { class: 'form-error', role: 'alert', hidden: true });
    const resetError = h('p', { class: 'form-error', role: 'alert', hidden: true });
    const resetResult = h('div', { class: 'notice', id: 'reset-result', role: 'status', hidden: true });
    const balance = h('p', { class: 'big-balance', id: 'account-balance' });
    const frozen = h('p', { class: 'integrity-banner frozen', id: 'account-frozen', hidden: true });
    const ledgerSlot = h('div', { class: 'ledger-slot' });
    const reset =
      selected.role === 'admin'
        ? h('p', { class: 'muted', id: 'reset-admin', text: t('admin.reset_admin') })
        : h(
            'form',
            { class: 'form reset-form', id: 'reset-form', novalidate: true, onsubmit: resetPassword },
            h('h3', { text: t('admin.reset_title') }),
            h('label', { class: 'field' }, h('span', { class: 'field-label', text: t('admin.reason_label') }), h('input', { name: 'reason', required: true, maxlength: '500', value: resetReason, oninput: (event) => { resetReason = event.target.value; } })),
            resetError,
            resetResult,
            h('button', { type: 'submit', class: 'btn', text: t('admin.reset_submit') }),
          );
    const section = h(
      'section',
      { class: 'panel', id: 'account-detail' },
      h('h2', { text: selected.name }),
      balance,
      frozen,
      h(
        'form',
        { class: 'form adjust-form', id: 'adjust-form', novalidate: true, onsubmit: adjust },
        h('label', { class: 'field' }, h('span', { class: 'field-label', text: t('admin.amount_label') }), h('input', { name: 'amount', type: 'number', step: '1', required: true, inputmode: 'numeric', value: draft.amount, oninput: (event) => { draft.amount = event.target.value; } })),
        h('label', { class: 'field' }, h('span', { class: 'field-label', text: t('admin.reason_label') }), h('input', { name: 'reason', required: true, maxlength: '500', value: draft.reason, oninput: (event) => { draft.reason = event.target.value; } })),
        adjustError,
        h('button', { type: 'submit', class: 'btn primary', text: t('admin.adjust') }),
      ),
      reset,
      ledgerSlot,
    );
    return { id: selected.id, section, balance, frozen, adjustError, resetError, resetResult, ledgerSlot };
  }

  function showText(el, text) {
    el.textContent = text || '';
    el.hidden = !text;
  }

  function updateDetail() {
    detail.balance.textContent = t('admin.balance', { coins: formatNumber(selected.balance ?? 0) });
    showText(detail.frozen, selected.frozen ? t('admin.frozen_reason', { reason: selected.frozen }) : '');
    showText(detail.adjustError, adjustError);
    showText(detail.resetError, resetError);
    const form = detail.section.querySelector('#adjust-form');
    // Emptied after an adjustment went through (the drafts were cleared): the form shows that.
    if (form.amount.value !== draft.amount) form.amount.value = draft.amount;
    if (form.reason.value !== draft.reason) form.reason.value = draft.reason;
    const resetForm = detail.section.querySelector('#reset-form');
    if (resetForm && resetForm.reason.value !== resetReason) resetForm.reason.value = resetReason;
    detail.resetResult.hidden = !temporary;
    detail.resetResult.replaceChildren(
      ...(temporary
        ? [
            h('p', { text: t('admin.reset_done', { name: temporary.name }) }),
            h('p', {}, h('code', { class: 'temporary-password', id: 'temporary-password', text: temporary.password })),
            h('p', { class: 'hint', text: t('admin.reset_hint') }),
          ]
        : []),
    );
    detail.ledgerSlot.replaceChildren(ledgerTable());
  }

  function buildView() {
    const searchForm = h(
      'form',
      { class: 'form search-form', role: 'search', onsubmit: (event) => { event.preventDefault(); query = event.target.q.value.trim(); search(); } },
      h('label', { class: 'field inline' }, h('span', { class: 'field-label', text: t('admin.search') }), h('input', { name: 'q', type: 'search', value: query, maxlength: '24', pattern: '[A-Za-z0-9_\\-]*', oninput: (event) => { query = event.target.value.trim(); } })),
      h('button', { type: 'submit', class: 'btn primary', text: t('admin.search_submit') }),
    );
    const errorSlot = h('p', { class: 'form-error', role: 'alert', hidden: true });
    const listSlot = h('div', { class: 'account-list-slot' });
    const detailSlot = h('div', { class: 'account-detail-slot' });
    const reportsSlot = h('div', { class: 'reports-slot' });
    const page = h(
      'div',
      { class: 'page admin-page' },
      h('h1', { text: t('admin.title') }),
      adminTabs('accounts'),
      h('div', { class: 'admin-grid' }, h('section', { class: 'panel' }, searchForm, errorSlot, listSlot), detailSlot),
      reportsSlot,
    );
    return { page, errorSlot, listSlot, detailSlot, reportsSlot };
  }

  function render() {
    if (gone) return;
    const me = currentUser();
    if (!me || !me.is_admin) {
      view = null;
      detail = null;
      root.replaceChildren(h('div', { class: 'page narrow' }, h('h1', { text: t('admin.title') }), h('p', { class: 'notice', text: t('admin.only') })));
      return;
    }
    if (!view || !root.contains(view.page)) {
      view = buildView();
      detail = null;
      root.replaceChildren(view.page);
    }
    showText(view.errorSlot, error);
    view.listSlot.replaceChildren(...[accountList()].filter(Boolean));
    if (!selected) {
      detail = null;
      view.detailSlot.replaceChildren();
    } else {
      if (!detail || detail.id !== selected.id) {
        detail = buildDetail();
        view.detailSlot.replaceChildren(detail.section);
      }
      updateDetail();
    }
    view.reportsSlot.replaceChildren(...[reportsPanel()].filter(Boolean));
  }

  /** New words: every part built again in them (the drafts carry what was typed). */
  function relabel() {
    view = null;
    detail = null;
    render();
  }

  render();
  if (currentUser() && currentUser().is_admin) {
    search();
    loadReports();
  }
  const off = onSignInChange(() => relabel()); // his own coins are not on this page
  return {
    relabel,
    unmount: () => {
      gone = true;
      off();
    },
  };
}
