/**
 * A bounded memory of recently written event ids, as 52-bit hashes: a miss means "certainly not written
 * recently"; a hit means "maybe", to be confirmed in the store. When full, the oldest entry goes first.
 *
 * It holds up to a million entries for the life of the server, so it lives in typed arrays rather than a `Set`
 * of numbers: hashes above 2³¹ are heap objects in a `Set`, which every full garbage collection would have to
 * visit. A ring keeps the hashes in the order they came; an open-addressing table (linear probing, entries
 * removed by shifting their followers back) maps a hash to its place in the ring.
 */
export function createRecentIds(wanted: number) {
  const limit = Math.max(1, Math.floor(wanted))
  const ring = new Float64Array(limit)
  let size = 0
  /** Where the next entry goes in the ring (once full: the oldest entry, which it replaces). */
  let head = 0
  const capacity = 2 ** Math.ceil(Math.log2(Math.max(2, limit * 2)))
  const mask = capacity - 1
  /** Ring position + 1 per slot; 0 is an empty slot. */
  const slots = new Int32Array(capacity)

  /** The table slot holding this ring position's entry. */
  function slotOf(hash: number, position: number): number {
    let i = home(hash)
    while (slots[i] !== position + 1) i = (i + 1) & mask
    return i
  }

  function home(hash: number): number {
    // The hash's high 32 bits (see hashOf) spread well over the table.
    return Math.floor(hash / 0x100000) & mask
  }

  function remove(position: number): void {
    let hole = slotOf(ring[position], position)
    slots[hole] = 0
    // Shift back the entries after the hole whose home lies at or before it, so that probing still finds them.
    for (let i = (hole + 1) & mask; slots[i] !== 0; i = (i + 1) & mask) {
      const wanted = home(ring[slots[i] - 1])
      const distanceToHole = (hole - wanted) & mask
      const distanceToHere = (i - wanted) & mask
      if (distanceToHole < distanceToHere) {
        slots[hole] = slots[i]
        slots[i] = 0
        hole = i
      }
    }
  }

  function contains(hash: number): boolean {
    for (let i = home(hash); slots[i] !== 0; i = (i + 1) & mask) if (ring[slots[i] - 1] === hash) return true
    return false
  }

  return {
    has: (id: string) => contains(hashOf(id)),
    add(id: string): void {
      const hash = hashOf(id)
      if (contains(hash)) return
      if (size === limit) remove(head)
      else size++
      ring[head] = hash
      let i = home(hash)
      while (slots[i] !== 0) i = (i + 1) & mask
      slots[i] = head + 1
      head = (head + 1) % limit
    },
    get size() {
      return size
    },
  }
}

/** Two 32-bit FNV-style hashes of the id joined into 52 bits (exact in a double). */
function hashOf(id: string): number {
  let a = 0x811c9dc5
  let b = 0x01000193
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995)
  }
  return (a >>> 0) * 0x100000 + ((b >>> 12) & 0xfffff)
}
