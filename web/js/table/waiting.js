// Before a match: the seats (sit here, add or remove a bot), joining as a guest, the links.
import { del, errorText } from '../api.js';
import { linkField, watchUrlFor } from '../copy.js';
import { h } from '../dom.js';
import { formatNumber, t } from '../i18n.js';
import { currentUser } from '../session.js';
import { toast } from '../toast.js';
import { botLevelText, displayName } from './describe.js';
import { guestBadge } from './render.js';

export function waitingPanel(game) {
  const st = game.st;
  const { code, watch } = st;
  const table = st.table;
  const me = currentUser();
  const seated = table.seats.filter((seat) => seat.kind !== 'empty').length;
  const creator = game.isCreator();
  const stake = table.rules.stake;
  const canSit = !watch && st.seat === null && table.status !== 'playing' && table.seats.some((seat) => seat.kind === 'empty');
  const children = [h('h2', { text: t('waiting.title', { seated, seats: table.seats.length }) })];
  children.push(
    h(
      'ul',
      { class: 'seat-list' },
      table.seats.map((seat) =>
        h(
          'li',
          { class: ['seat-line', seat.kind], dataset: { seat: String(seat.seat) } },
          h('span', { class: 'seat-no', text: t('table.seat_n', { n: seat.seat + 1 }) }),
          seat.kind === 'human' ? h('span', { class: ['conn', seat.connected ? 'online' : 'offline'], role: 'img', 'aria-label': seat.connected ? t('table.online') : t('table.offline'), title: seat.connected ? t('table.online') : t('table.offline') }) : null,
          h('span', { class: 'seat-who', text: seat.kind === 'empty' ? t('table.free_seat') : displayName(seat) }),
          guestBadge(seat),
          seat.kind === 'empty' && canSit && me && !(stake > 0 && me.kind === 'guest')
            ? h('button', { type: 'button', class: 'btn small primary', dataset: { key: `sit:${seat.seat}`, action: 'sit' }, onclick: () => game.join(seat.seat), text: t('waiting.sit_here') })
            : null,
          seat.kind === 'empty' && creator && stake === 0 && table.status !== 'playing'
            ? h(
                'span',
                { class: 'bot-add' },
                ['easy', 'normal', 'hard'].map((level) =>
                  h('button', { type: 'button', class: 'btn small ghost', dataset: { key: `bot:${seat.seat}:${level}`, bot: level }, onclick: () => game.tableCall('bots', { seat: seat.seat, level }), text: t('waiting.add_bot', { level: botLevelText(level) }) }),
                ),
              )
            : null,
          seat.kind === 'bot' && creator && table.status !== 'playing'
            ? h('button', { type: 'button', class: 'btn small ghost', onclick: () => del(`/api/tables/${encodeURIComponent(code)}/bots/${seat.seat}`).catch((failure) => toast(errorText(failure), 'error')), text: t('waiting.remove_bot') })
            : null,
        ),
      ),
    ),
  );
  if (!watch && st.seat === null && canSit) {
    if (!me) {
      children.push(
        h(
          'form',
          { class: 'form guest-join', id: 'guest-join', onsubmit: game.joinAsGuest },
          h(
            'label',
            { class: 'field' },
            h('span', { class: 'field-label', text: t('waiting.guest_name') }),
            h('input', { name: 'guest-name', required: true, minlength: '2', maxlength: '24', pattern: '[A-Za-z0-9_\\-]+', autocomplete: 'nickname', value: st.guestName }),
          ),
          stake > 0 ? h('p', { class: 'notice', text: t('waiting.staked_needs_account') }) : null,
          h('button', { type: 'submit', class: 'btn primary big', id: 'guest-join-button', disabled: stake > 0, text: t('waiting.join_as_guest') }),
          h('p', { class: 'hint' }, h('a', { href: `/#/login?next=${encodeURIComponent(location.pathname)}`, text: t('waiting.or_sign_in') })),
        ),
      );
    } else if (stake > 0 && me.kind === 'guest') {
      children.push(h('p', { class: 'notice', text: t('waiting.staked_needs_account') }));
    } else {
      children.push(h('button', { type: 'button', class: 'btn primary big', id: 'join-button', dataset: { key: 'join' }, onclick: () => game.join(undefined), text: stake > 0 ? t('waiting.join_staked', { coins: formatNumber(stake) }) : t('waiting.join') }));
    }
  }
  if (st.joinError) children.push(h('p', { class: 'form-error', role: 'alert', id: 'join-error', text: st.joinError }));
  // A refused rematch leaves the table waiting with everyone seated: why it did not start.
  if (st.rematchError && st.rematchError !== st.joinError) children.push(h('p', { class: 'form-error', role: 'alert', id: 'rematch-error', text: st.rematchError }));
  if (creator && seated >= 2 && seated < table.seats.length) {
    children.push(h('button', { type: 'button', class: 'btn secondary', id: 'start-button', onclick: () => game.tableCall('start', {}), text: t('waiting.start_now', { count: seated }) }));
  }
  if (!watch) {
    const links = [linkField(t('create.invite_link'), `${location.origin}/t/${code}`, 'invite-link')];
    const watchUrl = watchUrlFor(code);
    if (watchUrl) links.push(linkField(t('create.watch_link'), watchUrl, 'watch-link'));
    children.push(h('div', { class: 'share' }, links));
  }
  if (st.seat !== null) children.push(h('button', { type: 'button', class: 'btn ghost', id: 'leave-button', onclick: game.leave, text: t('table.leave') }));
  children.push(game.fairnessLine());
  return h('section', { class: 'panel waiting', id: 'waiting' }, children);
}

