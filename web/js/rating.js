// A player's rating as shown everywhere: one number, with "?" while it is provisional.

/** {rating, provisional} -> "1523" or "1500?"; '' for none (guests, bots). */
export function ratingText(rating) {
  if (!rating || typeof rating.rating !== 'number') return '';
  return `${rating.rating}${rating.provisional ? '?' : ''}`;
}
