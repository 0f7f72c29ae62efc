// One's own card move drawn at the tap, before the server answers: the card leaves the hand and
// lies on the table at once (and flies there), so a tap is seen in one frame instead of after a
// round trip. The server's update then replaces this view with the real one (the same cards in
// the same places: nothing moves); an error puts the confirmed view back (the card returns).
// Only what the move itself changes is drawn: the hand and the table.

/** The view after `action` of `seat`, or null when the move places no card (take, pass, …). */
export function provisionalView(view, action, seat) {
  if (!view || !view.hand || seat === null || seat === undefined) return null;
  let table;
  let placed;
  if (action.type === 'cover') {
    const pair = view.table[action.attack];
    if (!pair || pair.cover) return null;
    placed = [action.card];
    table = view.table.map((p, index) => (index === action.attack ? { ...p, cover: action.card } : p));
  } else if (action.type === 'lead' || action.type === 'throw_in' || action.type === 'transfer') {
    placed = action.cards || [];
    if (!placed.length) return null;
    table = [...view.table, ...placed.map((card) => ({ attack: card, cover: null }))];
  } else {
    return null;
  }
  if (!placed.every((card) => view.hand.includes(card))) return null;
  const hand = view.hand.filter((card) => !placed.includes(card));
  return { ...view, hand, table, legal: [], provisional: true };
}

/** The update's events for the flight of the provisional move (from the hand to the table). */
export function provisionalEvents(action, seat) {
  return [{ type: 'move', seat, action: { ...action, seat } }];
}
