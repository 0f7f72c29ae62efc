// Provably fair deals on the table page (docs/fairness.md): this browser's client seed for the next
// deal, sent once the table's commitment is known (a fresh random one for every commitment unless
// the player typed his own), and the line that shows the commitment and the seed.
import { h } from '../dom.js';
import { isClientSeed, newClientSeed } from '../fairness.js';
import { t } from '../i18n.js';
import { toast } from '../toast.js';

/** The seed state kept in the page's state object. */
export function newSeedState() {
  return { clientSeed: newClientSeed(), ownSeed: false, seedFor: null, seedSentFor: null, seedIds: new Set() };
}

/** The seed to send for the table's current commitment (a new one per commitment unless typed). */
export function seedFor(seeds, fair) {
  if (seeds.seedFor !== fair.commitment) {
    if (!seeds.ownSeed) seeds.clientSeed = newClientSeed();
    seeds.seedFor = fair.commitment;
  }
  return seeds.clientSeed;
}

/** After the table's commitment, and only between matches: this seat's client seed, naming it. */
export function sendClientSeed(game, socket) {
  const st = game.st;
  const fair = st.table && st.table.fairness;
  if (!fair || st.watch || st.seat === null || st.table.status === 'playing') return;
  const seed = seedFor(st.seeds, fair);
  if (st.seeds.seedSentFor === fair.commitment) return;
  const id = socket.command('client_seed', { seed, commitment: fair.commitment });
  if (id) {
    st.seeds.seedIds.add(id);
    st.seeds.seedSentFor = fair.commitment;
  }
}

/** The commitment of the next deal and, for a seated player between matches, his seed. */
export function fairnessLine(game, resend) {
  const st = game.st;
  const fair = st.table && st.table.fairness;
  if (!fair) return null;
  const short = `${fair.commitment.slice(0, 8)}…${fair.commitment.slice(-8)}`;
  const parts = [h('span', { text: t('fair.commitment', { number: fair.match_number }) }), ' ', h('code', { class: 'commitment', id: 'fair-commitment', title: fair.commitment, text: short })];
  if (st.seat !== null && !st.watch && st.table.status !== 'playing') {
    parts.push(
      h(
        'label',
        { class: 'field inline seed-field' },
        h('span', { class: 'field-label', text: t('fair.your_seed') }),
        h('input', {
          id: 'client-seed',
          value: st.seeds.clientSeed,
          maxlength: '32',
          spellcheck: 'false',
          'aria-describedby': 'fair-seed-state',
          onchange: (event) => {
            const value = event.target.value.trim().toLowerCase();
            if (!isClientSeed(value)) {
              toast(t('fair.bad_seed'), 'error');
              event.target.value = st.seeds.clientSeed;
              return;
            }
            st.seeds.clientSeed = value;
            st.seeds.ownSeed = true;
            st.seeds.seedSentFor = null;
            resend();
            game.set({ seedsRev: st.seedsRev + 1 });
          },
        }),
      ),
      h('span', { class: 'muted', id: 'fair-seed-state', text: st.seeds.seedSentFor === fair.commitment ? t('fair.seed_sent') : t('fair.seed_pending') }),
    );
  }
  return h('p', { class: 'fair-line hint', id: 'fair-line' }, parts);
}
