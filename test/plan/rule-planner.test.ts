import { describe, expect, it } from 'vitest'
import { NonePlanner } from '../../src/plan/none-planner.ts'
import { collapseWhitespace, RulePlanner, trainingPlanner } from '../../src/plan/rule-planner.ts'

const planner = new RulePlanner()

describe('RulePlanner', () => {
  it('splits two requests joined by "and"', () => {
    expect(
      planner.split('What is the weather in Paris tomorrow, and email the forecast to Ann'),
    ).toEqual(['What is the weather in Paris tomorrow', 'email the forecast to Ann'])
  })

  it('drops pure context sentences', () => {
    expect(
      planner.split(
        "I'm planning a trip to Lisbon next week. Find me flights from Berlin and book a hotel near the old town.",
      ),
    ).toEqual(['Find me flights from Berlin', 'book a hotel near the old town'])
  })

  it('keeps "X and Y" noun phrases in one step', () => {
    expect(planner.split('Compare the weather in Paris and London.')).toEqual([
      'Compare the weather in Paris and London',
    ])
  })

  it('gives a second object joined by "and" a step of its own, with the first clause\'s lead', () => {
    expect(planner.split('Find flights from Seattle to Tokyo and a hotel in Tokyo.')).toEqual([
      'Find flights from Seattle to Tokyo',
      'Find a hotel in Tokyo',
    ])
    expect(
      planner.split("Show me today's astronomy picture and any asteroids near Earth."),
    ).toEqual(["Show me today's astronomy picture", 'Show me any asteroids near Earth'])
    expect(
      planner.split("What's the area of a circle of radius 4, and the volume of a sphere?"),
    ).toEqual(["What's the area of a circle of radius 4", "What's the volume of a sphere?"])
    expect(planner.split("Show the league standings and yesterday's match result")).toEqual([
      'Show the league standings',
      "Show yesterday's match result",
    ])
  })

  it('splits second objects in general phrasings', () => {
    expect(planner.split('Get the stock price of Apple and the latest news about it')).toEqual([
      'Get the stock price of Apple',
      'Get the latest news about it',
    ])
    expect(
      planner.split('Can you find a cheap flight to Rome and a hotel near the station?'),
    ).toEqual(['Can you find a cheap flight to Rome', 'Can you find a hotel near the station?'])
    expect(
      planner.split('Translate this paragraph to German as well as the title to French'),
    ).toEqual(['Translate this paragraph to German', 'Translate the title to French'])
    expect(planner.split('Tell me my account balance and my last five transactions')).toEqual([
      'Tell me my account balance',
      'Tell me my last five transactions',
    ])
  })

  it('keeps pairs, names and titles joined by "and" in one step', () => {
    for (const request of [
      'Find a recipe that uses salt and pepper',
      'Turn this into a black and white photo',
      'Find episodes of Tom and Jerry',
      'List the pros and cons of electric cars',
      'Find the book Pride and Prejudice',
      'Play the soundtrack of Beauty and the Beast',
      'Search for tickets to The Lord of the Rings and the Return of the King',
      'Get the weather for Paris and London',
    ])
      expect(planner.split(request), request).toEqual([request])
  })

  it('keeps a second object in the clause without a short lead or a determiner', () => {
    // No determiner: a list of names, not a second object.
    expect(planner.split('Get the forecast for Paris and London')).toEqual([
      'Get the forecast for Paris and London',
    ])
    // A contraction is no possessive.
    expect(planner.split("Email Ana the agenda and it's done")).toEqual([
      "Email Ana the agenda and it's done",
    ])
    // Context, not a request: nothing to carry.
    expect(planner.split("I'm a fan of the club and the city. Find the next match.")).toEqual([
      'Find the next match',
    ])
    // A pair the clause opened, or a person joined to a pronoun: one noun phrase.
    for (const request of [
      'Find a hotel between the airport and the station',
      'Show the difference between a crocodile and an alligator',
      'Get both the title and the author of the book',
      'Book a table for me and my wife',
    ])
      expect(planner.split(request)).toEqual([request])
  })

  it('splits at "then", "after that" and sentence-leading "Also,"', () => {
    expect(planner.split('Translate this to French, then send it to Marie on Slack.')).toEqual([
      'Translate this to French',
      'send it to Marie on Slack',
    ])
    expect(
      planner.split('Get the AAPL quote. After that, post it to #finance. Also, remind me at 5pm.'),
    ).toEqual(['Get the AAPL quote', 'post it to #finance', 'remind me at 5pm'])
  })

  it('drops context clauses inside a request sentence', () => {
    const steps = planner.split(
      "I'm a football fan and I want to know Messi's career stats. Can you fetch the latest transfer news?",
    )
    expect(steps).toEqual([
      "I want to know Messi's career stats",
      'Can you fetch the latest transfer news?',
    ])
  })

  it('keeps a verbless first clause joined to a request by "and" or "then" as a step', () => {
    expect(planner.split('weather in Paris and email Ann the forecast')).toEqual([
      'weather in Paris',
      'email Ann the forecast',
    ])
    expect(planner.split('The stock price of Nvidia, then add it to my watchlist.')).toEqual([
      'The stock price of Nvidia',
      'add it to my watchlist',
    ])
    // Statements, scene-setting openers, greetings and bare commas stay context.
    for (const [request, steps] of [
      ['My flight is UA 12 and check me in', ['check me in']],
      ['As a fan of the club and find the next match', ['find the next match']],
      ['Hi there, find me a cheap hotel', ['find me a cheap hotel']],
      ['Tickets for tonight, book two seats', ['book two seats']],
      ['A long list of many different things to buy for the party and order them', ['order them']],
    ] as const) {
      expect(planner.split(request), request).toEqual(steps)
    }
  })

  it('reads the imperatives of the training census as requests (round 47), not detail verbs', () => {
    // Each sentence was dropped as context before: its verb was not in ACTION_VERBS.
    const request =
      "Conduct a survey of coffee prices in Rome. Investigate the city's tram routes. Use the Exchange API to convert 20 EUR to USD."
    expect(planner.split(request)).toEqual([
      'Conduct a survey of coffee prices in Rome',
      "Investigate the city's tram routes",
      'Use the Exchange API to convert 20 EUR to USD',
    ])
    const clauses = 'I need the DNS records of example.com, and perform a whois lookup of it.'
    expect(planner.split(clauses)).toEqual([
      'I need the DNS records of example.com',
      'perform a whois lookup of it',
    ])
    // Verbs that qualify the request before them stay in its step.
    expect(
      planner.split('Find hotels in Rome, include the prices and limit the results to 5'),
    ).toEqual(['Find hotels in Rome, include the prices and limit the results to 5'])
    // The training rows keep the plans the shipped model was fitted on.
    expect(trainingPlanner().split(request)).toEqual([request])
    expect(trainingPlanner().split(clauses)).toEqual([
      'I need the DNS records of example.com, and perform a whois lookup of it',
    ])
  })

  it('drops a verbless first clause when planning training rows', () => {
    expect(trainingPlanner().split('weather in Paris and email Ann the forecast')).toEqual([
      'email Ann the forecast',
    ])
  })

  it('returns the whole instruction when it finds no request', () => {
    expect(planner.split('text my mom that I am running late')).toEqual([
      'text my mom that I am running late',
    ])
    expect(planner.split('Just some context.')).toEqual(['Just some context.'])
  })

  it('caps the number of steps, merging the rest into the last one', () => {
    const capped = new RulePlanner({ maxSteps: 2 }).split('Find a. Get b. Send c. Book d.')
    expect(capped).toEqual(['Find a', 'Get b; Send c; Book d'])
  })

  it('reports its name in the plan result', async () => {
    expect(await planner.plan('Find flights')).toEqual({ steps: ['Find flights'], planner: 'rule' })
  })
})

describe('NonePlanner', () => {
  it('returns the whole instruction as one step', async () => {
    expect(await new NonePlanner().plan('  Find flights and book a hotel  ')).toEqual({
      steps: ['Find flights and book a hotel'],
      planner: 'none',
    })
  })
})

describe('collapseWhitespace', () => {
  it('gives the text of replacing every run of spaces and tabs, on random whitespace-heavy text', () => {
    const reference = (text: string) => text.replace(/[^\S\n]+/g, ' ').replace(/ ?\n\s*/g, '\n')
    const pieces = ['a', 'word', ' ', '  ', '\t', '\n', ' \n ', '\u00a0', '\r', '\u2003', ',', 'é']
    let seed = 7
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
    for (let round = 0; round < 2000; round += 1) {
      let text = ''
      const length = Math.floor(random() * 12)
      for (let at = 0; at < length; at += 1) text += pieces[Math.floor(random() * pieces.length)]
      expect(collapseWhitespace(text), JSON.stringify(text)).toBe(reference(text))
    }
  })
})
