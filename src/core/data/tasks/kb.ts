/**
 * Question answering over a generated knowledge base: invented people, cities, countries and
 * companies with attributes, one document per entity stating its facts, and two benchmarks
 * that differ the way NQ and HotpotQA do: `kb-single` (one document answers: "Where was Zarvo
 * Quill born?") and `kb-multi` (two documents must be chained: "In which country was Zarvo
 * Quill born?" needs the person's birthplace, then that city's country).
 *
 * The corpus (`corpus()`) loads into the BM25 retriever. Each row's meta carries `hops` (the
 * entity to look up and the fact found at each step) and `supportingTitles`, which the
 * warm-start demonstrations and recall tests use. Splits are by entity: test questions ask
 * about people, cities and companies that no train question mentions. Deterministic (seeded).
 * Tested by test/core/data/tasks.test.ts.
 */
import { createRng, type Rng } from '../prng';
import type { DatasetRow, Passage } from '../types';
import type { TaskGenerator, TaskSplit } from './types';

export interface KbPerson {
  name: string;
  city: string;
  company: string;
}
export interface KbCity {
  name: string;
  country: string;
}
export interface KbCompany {
  name: string;
  city: string;
}
export interface KnowledgeBase {
  people: KbPerson[];
  cities: KbCity[];
  companies: KbCompany[];
  countries: string[];
}

/** One retrieval step of a question: look up `entity`, read `fact` from its document. */
export interface KbHop {
  entity: string;
  fact: string;
}

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ra',
  'zen',
  'tor',
  'vel',
  'qui',
  'dar',
  'sol',
  'bri',
  'nox',
  'pel',
  'mar',
  'tis',
  'gor',
  'fen',
  'ul',
  'ash',
  'rin',
  'ob',
  'cal',
  'yv',
  'sha',
];

export interface KbSizes {
  people: number;
  cities: number;
  companies: number;
  countries: number;
}
export const DEFAULT_KB_SIZES: KbSizes = { people: 240, cities: 24, companies: 24, countries: 6 };
/** Fraction of each entity kind whose questions go to the test split. */
const TEST_FRACTION = 0.2;

function makeNamer(rng: Rng): (syllables: number) => string {
  const used = new Set<string>();
  return (n) => {
    for (;;) {
      let s = '';
      for (let i = 0; i < n; i++) s += rng.pick(SYLLABLES);
      const name = s[0].toUpperCase() + s.slice(1);
      if (!used.has(name)) {
        used.add(name);
        return name;
      }
    }
  };
}

export function generateKnowledgeBase(seed: string | number = 'v1', sizes: KbSizes = DEFAULT_KB_SIZES): KnowledgeBase {
  const rng = createRng(`kb/${seed}`);
  const name = makeNamer(rng);
  const countries = Array.from({ length: sizes.countries }, () => name(2));
  const cities = Array.from({ length: sizes.cities }, (_, i) => ({ name: name(2), country: countries[i % countries.length] }));
  const companies = Array.from({ length: sizes.companies }, () => ({ name: `${name(2)}co`, city: rng.pick(cities).name }));
  const people = Array.from({ length: sizes.people }, () => ({
    name: `${name(2)} ${name(2)}`,
    city: rng.pick(cities).name,
    company: rng.pick(companies).name,
  }));
  return { people, cities, companies, countries };
}

/** One document per entity; titles are the entity names. */
export function knowledgeBaseCorpus(kb: KnowledgeBase): Passage[] {
  return [
    ...kb.people.map((p, i) => ({ id: `person-${i}`, title: p.name, text: `${p.name} was born in ${p.city}. ${p.name} works for ${p.company}.` })),
    ...kb.cities.map((c, i) => ({ id: `city-${i}`, title: c.name, text: `${c.name} is a city in ${c.country}.` })),
    ...kb.companies.map((c, i) => ({ id: `company-${i}`, title: c.name, text: `${c.name} is a company based in ${c.city}.` })),
    ...kb.countries.map((c, i) => ({ id: `country-${i}`, title: c, text: `${c} is a country.` })),
  ];
}

interface Question {
  question: string;
  answer: string;
  hops: KbHop[];
  subject: string;
}

function singleHop(kb: KnowledgeBase): Question[] {
  const out: Question[] = [];
  for (const p of kb.people) {
    out.push({ question: `Where was ${p.name} born?`, answer: p.city, hops: [{ entity: p.name, fact: p.city }], subject: p.name });
    out.push({ question: `Who does ${p.name} work for?`, answer: p.company, hops: [{ entity: p.name, fact: p.company }], subject: p.name });
  }
  for (const c of kb.cities)
    out.push({ question: `Which country is ${c.name} in?`, answer: c.country, hops: [{ entity: c.name, fact: c.country }], subject: c.name });
  for (const c of kb.companies) out.push({ question: `Where is ${c.name} based?`, answer: c.city, hops: [{ entity: c.name, fact: c.city }], subject: c.name });
  return out;
}

function multiHop(kb: KnowledgeBase): Question[] {
  const city = new Map(kb.cities.map((c) => [c.name, c]));
  const company = new Map(kb.companies.map((c) => [c.name, c]));
  const out: Question[] = [];
  for (const p of kb.people) {
    const country = city.get(p.city)!.country;
    out.push({
      question: `In which country was ${p.name} born?`,
      answer: country,
      hops: [
        { entity: p.name, fact: p.city },
        { entity: p.city, fact: country },
      ],
      subject: p.name,
    });
    const hq = company.get(p.company)!.city;
    // Skip when the answer is also the person's birthplace: one document would answer it.
    if (hq !== p.city)
      out.push({
        question: `Where is the company ${p.name} works for based?`,
        answer: hq,
        hops: [
          { entity: p.name, fact: p.company },
          { entity: p.company, fact: hq },
        ],
        subject: p.name,
      });
  }
  return out;
}

export const KB_BENCHMARKS = {
  'kb-single': { tier: 1, description: 'one-document questions about a generated knowledge base (NQ-like)', build: singleHop },
  'kb-multi': { tier: 2, description: 'two-document questions chaining facts of a generated knowledge base (HotpotQA-like)', build: multiHop },
} as const satisfies Record<string, { tier: number; description: string; build: (kb: KnowledgeBase) => Question[] }>;
export type KbBenchmark = keyof typeof KB_BENCHMARKS;

export function kbGenerator(name: KbBenchmark, seed: string | number = 'v1', sizes: KbSizes = DEFAULT_KB_SIZES): TaskGenerator {
  const spec = KB_BENCHMARKS[name];
  const kb = generateKnowledgeBase(seed, sizes);
  // Test subjects: a fixed seeded fifth of every entity kind.
  const rng = createRng(`kb/${seed}/split`);
  const testSubjects = new Set<string>();
  for (const names of [kb.people.map((p) => p.name), kb.cities.map((c) => c.name), kb.companies.map((c) => c.name)]) {
    for (const n of rng.shuffle(names).slice(0, Math.round(names.length * TEST_FRACTION))) testSubjects.add(n);
  }
  const order = createRng(`kb/${seed}/${name}/order`).shuffle(spec.build(kb));
  const bySplit: Record<TaskSplit, DatasetRow[]> = { train: [], test: [] };
  for (const q of order) {
    const split: TaskSplit = testSubjects.has(q.subject) ? 'test' : 'train';
    bySplit[split].push({
      id: `${name}/${split}/${bySplit[split].length}`,
      question: q.question,
      answers: [q.answer],
      benchmark: name,
      meta: { tier: spec.tier, hops: q.hops, supportingTitles: q.hops.map((h) => h.entity) },
    });
  }
  const corpus = knowledgeBaseCorpus(kb);
  return {
    name,
    description: spec.description,
    domain: 'qa',
    tier: spec.tier,
    sizes: { train: bySplit.train.length, test: bySplit.test.length },
    rows: (split, count) => bySplit[split].slice(0, count ?? undefined).map((r) => ({ ...r, answers: [...r.answers], meta: { ...r.meta } })),
    corpus: () => corpus.map((p) => ({ ...p })),
  };
}
