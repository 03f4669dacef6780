// Dollars as a designer reads them: cents for most jobs, more digits only for fractions of a cent.
export function formatUsd(usd) {
  if (!usd) return "$0";
  return usd >= 0.01 ? `$${usd.toFixed(2)}` : `$${usd.toPrecision(2)}`;
}
