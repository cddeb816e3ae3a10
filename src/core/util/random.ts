/**
 * The one seeded generator of the core: mulberry32 (32-bit state, period 2^32; good for
 * sampling, init, shuffles and task generation, not for cryptography). Never Math.random: a run
 * is reproducible from its seed. models/random.ts (seed mixing, normals, permutations) and
 * data/prng.ts (string seeds, picks) build on it.
 */

/** A stream of uniforms in [0, 1). */
export type Uniform = () => number;

export function mulberry32(seed: number): Uniform {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
