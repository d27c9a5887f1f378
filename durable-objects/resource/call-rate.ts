/**
 * Calls per second of one token at one price, over the last whole second (and the one under way): holds are sized to it
 * (billing.ts).
 */
export class CallRate {
  private second = 0;
  private current = 0;
  private last = 0;

  count(now: number): void {
    const second = Math.floor(now / 1000);
    if (second !== this.second) {
      this.last = second === this.second + 1 ? this.current : 0;
      this.second = second;
      this.current = 0;
    }
    this.current++;
  }

  perSecond(now: number): number {
    const second = Math.floor(now / 1000);
    if (second === this.second) return Math.max(this.last, this.current);
    return second === this.second + 1 ? this.current : 0;
  }
}
