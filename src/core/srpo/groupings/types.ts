/**
 * What an advantage grouping is: a pure function that writes the advantage of every prepared
 * event and member in place from their rewards, and returns counts of its comparison groups.
 * Independent of the loss (variants/): any grouping with any variant is an ablation, as verl
 * keeps advantage estimators and policy losses in two registries.
 */
import type { AdvantageOptions } from '../advantages';
import type { GroupStats, PreparedEvent, PreparedMember } from '../types';

export interface AdvantageGrouping {
  /** One line for the UI and docs. */
  description: string;
  /** Sets `advantage` on every event and member; members[i].event indexes `events`. */
  assign: (events: PreparedEvent[], members: PreparedMember[], o: AdvantageOptions) => GroupStats;
}

/** Separator of composite group keys (cannot occur in ids built by the workflows). */
export const KEY_SEP = '\u0000';
