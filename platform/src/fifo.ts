/** A first-in first-out queue with O(1) push, shift and unshift (a growable ring). */
export class Fifo<T> {
  private items: (T | undefined)[] = new Array(16)
  private head = 0
  length = 0

  push(item: T): void {
    this.grow()
    this.items[(this.head + this.length++) % this.items.length] = item
  }

  unshift(item: T): void {
    this.grow()
    this.head = (this.head - 1 + this.items.length) % this.items.length
    this.items[this.head] = item
    this.length++
  }

  shift(): T | undefined {
    if (this.length === 0) return undefined
    const item = this.items[this.head]
    this.items[this.head] = undefined
    this.head = (this.head + 1) % this.items.length
    this.length--
    return item
  }

  private grow(): void {
    if (this.length < this.items.length) return
    const items = new Array<T | undefined>(this.items.length * 2)
    for (let i = 0; i < this.length; i++) items[i] = this.items[(this.head + i) % this.items.length]
    this.items = items
    this.head = 0
  }
}
