/**
 * The labelled near-duplicate set (docs/learning.md#measuring-it). Each family holds a skill, a
 * paraphrased re-implementation of it (different wording, different code: a near-duplicate) and a
 * different skill that shares words with it (not a near-duplicate). Written for this bench; the
 * development set's tools add more "shares words, different skill" pairs at run time.
 */
export interface SkillSample {
  readonly description: string;
  readonly code: string;
}

export interface Family {
  readonly id: string;
  readonly skill: SkillSample;
  readonly paraphrase: SkillSample;
  readonly sharesWords: SkillSample;
}

const HEAD = "import json, sys\nargs = json.loads(sys.argv[1])\n";
const py = (body: string): string => `${HEAD}${body}\n`;

export const FAMILIES: readonly Family[] = [
  {
    id: "word_count",
    skill: {
      description: "Counts the words in a text and returns the count.",
      code: py("words = args['text'].split()\nprint(json.dumps({'count': len(words)}))"),
    },
    paraphrase: {
      description: "Return how many words a piece of text contains.",
      code: py("n = 0\nfor token in args['text'].split():\n    n += 1\nprint(json.dumps({'words': n}))"),
    },
    sharesWords: {
      description: "Counts the vowels in a text and returns the count.",
      code: py("print(json.dumps({'count': sum(c in 'aeiou' for c in args['text'].lower())}))"),
    },
  },
  {
    id: "celsius",
    skill: {
      description: "Converts a temperature from Celsius to Fahrenheit.",
      code: py("c = float(args['celsius'])\nprint(json.dumps({'fahrenheit': c * 9 / 5 + 32}))"),
    },
    paraphrase: {
      description: "Turn a Celsius temperature into degrees Fahrenheit.",
      code: py("def to_f(value):\n    return value * 1.8 + 32\nprint(json.dumps({'f': to_f(float(args['c']))}))"),
    },
    sharesWords: {
      description: "Converts a temperature from Kelvin to Celsius.",
      code: py("print(json.dumps({'celsius': float(args['kelvin']) - 273.15}))"),
    },
  },
  {
    id: "reverse",
    skill: { description: "Reverses a string.", code: py("print(json.dumps({'reversed': args['text'][::-1]}))") },
    paraphrase: {
      description: "Return the input text written backwards.",
      code: py("out = ''.join(reversed(args['s']))\nprint(json.dumps({'result': out}))"),
    },
    sharesWords: {
      description: "Reverses the order of words in a sentence.",
      code: py("print(json.dumps({'result': ' '.join(args['text'].split()[::-1])}))"),
    },
  },
  {
    id: "slugify",
    skill: {
      description: "Turns a title into a URL slug: lowercase words joined by hyphens.",
      code: py("import re\nslug = re.sub(r'[^a-z0-9]+', '-', args['title'].lower()).strip('-')\nprint(json.dumps({'slug': slug}))"),
    },
    paraphrase: {
      description: "Make a URL-friendly slug from a title, lowercased and hyphen-separated.",
      code: py("import re\nwords = re.findall(r'[a-z0-9]+', args['text'].lower())\nprint(json.dumps({'slug': '-'.join(words)}))"),
    },
    sharesWords: {
      description: "Extracts the title of a web page from its HTML.",
      code: py(
        "import re\nm = re.search(r'<title>(.*?)</title>', args['html'], re.S)\nprint(json.dumps({'title': m.group(1) if m else ''}))",
      ),
    },
  },
  {
    id: "is_prime",
    skill: {
      description: "Checks whether an integer is a prime number.",
      code: py("n = int(args['n'])\nok = n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))\nprint(json.dumps({'prime': ok}))"),
    },
    paraphrase: {
      description: "Tell if a number is prime.",
      code: py(
        "n = int(args['number'])\nprime = n >= 2\nd = 2\nwhile d * d <= n:\n    if n % d == 0:\n        prime = False\n        break\n    d += 1\nprint(json.dumps({'is_prime': prime}))",
      ),
    },
    sharesWords: {
      description: "Returns the prime factors of an integer.",
      code: py(
        "n = int(args['n'])\nout = []\nd = 2\nwhile n > 1:\n    while n % d == 0:\n        out.append(d)\n        n //= d\n    d += 1\nprint(json.dumps({'factors': out}))",
      ),
    },
  },
  {
    id: "email",
    skill: {
      description: "Validates an email address and says whether it is well formed.",
      code: py(
        "import re\nok = re.fullmatch(r'[^@\\s]+@[^@\\s]+\\.[a-z]+', args['email'], re.I) is not None\nprint(json.dumps({'valid': ok}))",
      ),
    },
    paraphrase: {
      description: "Check if a string is a syntactically valid e-mail address.",
      code: py(
        "import re\npattern = re.compile(r'^[\\w.+-]+@[\\w-]+(\\.[\\w-]+)+$')\nprint(json.dumps({'ok': bool(pattern.match(args['address']))}))",
      ),
    },
    sharesWords: {
      description: "Extracts every email address from a text.",
      code: py("import re\nprint(json.dumps({'emails': re.findall(r'[\\w.+-]+@[\\w-]+\\.[\\w.]+', args['text'])}))"),
    },
  },
  {
    id: "mean",
    skill: {
      description: "Computes the average of a list of numbers.",
      code: py("xs = args['values']\nprint(json.dumps({'mean': sum(xs) / len(xs)}))"),
    },
    paraphrase: {
      description: "Return the arithmetic mean of the given numbers.",
      code: py("import statistics\nprint(json.dumps({'result': statistics.mean(args['numbers'])}))"),
    },
    sharesWords: {
      description: "Computes the median of a list of numbers.",
      code: py(
        "xs = sorted(args['values'])\nm = len(xs) // 2\nprint(json.dumps({'median': xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2}))",
      ),
    },
  },
  {
    id: "dedupe",
    skill: {
      description: "Removes duplicate items from a list, keeping the first occurrence order.",
      code: py(
        "seen = set()\nout = []\nfor x in args['items']:\n    if x not in seen:\n        seen.add(x)\n        out.append(x)\nprint(json.dumps({'items': out}))",
      ),
    },
    paraphrase: {
      description: "Deduplicate a list while preserving order.",
      code: py("print(json.dumps({'result': list(dict.fromkeys(args['list']))}))"),
    },
    sharesWords: {
      description: "Finds the items that appear more than once in a list.",
      code: py(
        "from collections import Counter\nc = Counter(args['items'])\nprint(json.dumps({'duplicates': [k for k, v in c.items() if v > 1]}))",
      ),
    },
  },
  {
    id: "palindrome",
    skill: {
      description: "Checks whether a word or phrase is a palindrome, ignoring case and spaces.",
      code: py("s = ''.join(c for c in args['text'].lower() if c.isalnum())\nprint(json.dumps({'palindrome': s == s[::-1]}))"),
    },
    paraphrase: {
      description: "Decide if a phrase reads the same forwards and backwards (case and spaces ignored).",
      code: py(
        "t = [c for c in args['phrase'].lower() if c.isalnum()]\ni, j = 0, len(t) - 1\nok = True\nwhile i < j:\n    if t[i] != t[j]:\n        ok = False\n    i += 1\n    j -= 1\nprint(json.dumps({'result': ok}))",
      ),
    },
    sharesWords: {
      description: "Checks whether two words are anagrams of each other.",
      code: py("print(json.dumps({'anagram': sorted(args['a'].lower()) == sorted(args['b'].lower())}))"),
    },
  },
  {
    id: "days_between",
    skill: {
      description: "Returns the number of days between two ISO dates.",
      code: py(
        "from datetime import date\na = date.fromisoformat(args['start'])\nb = date.fromisoformat(args['end'])\nprint(json.dumps({'days': (b - a).days}))",
      ),
    },
    paraphrase: {
      description: "How many days separate two dates given as YYYY-MM-DD.",
      code: py(
        "import datetime\nd1 = datetime.datetime.strptime(args['from'], '%Y-%m-%d')\nd2 = datetime.datetime.strptime(args['to'], '%Y-%m-%d')\nprint(json.dumps({'result': abs((d2 - d1).days)}))",
      ),
    },
    sharesWords: {
      description: "Returns the day of the week of an ISO date.",
      code: py("from datetime import date\nprint(json.dumps({'weekday': date.fromisoformat(args['date']).strftime('%A')}))"),
    },
  },
  {
    id: "csv_sum",
    skill: {
      description: "Sums a numeric column of CSV text.",
      code: py(
        "import csv, io\nrows = csv.DictReader(io.StringIO(args['csv']))\nprint(json.dumps({'sum': sum(float(r[args['column']]) for r in rows)}))",
      ),
    },
    paraphrase: {
      description: "Add up all values of one column in a CSV document.",
      code: py(
        "lines = args['text'].strip().splitlines()\nheader = lines[0].split(',')\ni = header.index(args['col'])\ntotal = 0.0\nfor line in lines[1:]:\n    total += float(line.split(',')[i])\nprint(json.dumps({'total': total}))",
      ),
    },
    sharesWords: {
      description: "Converts CSV text to a list of JSON objects.",
      code: py("import csv, io\nprint(json.dumps({'rows': list(csv.DictReader(io.StringIO(args['csv'])))}))"),
    },
  },
  {
    id: "title_case",
    skill: {
      description: "Capitalizes the first letter of every word in a text.",
      code: py("print(json.dumps({'text': args['text'].title()}))"),
    },
    paraphrase: {
      description: "Convert a sentence to title case.",
      code: py("out = ' '.join(w[:1].upper() + w[1:] for w in args['sentence'].split(' '))\nprint(json.dumps({'result': out}))"),
    },
    sharesWords: {
      description: "Counts the capital letters in a text.",
      code: py("print(json.dumps({'capitals': sum(1 for c in args['text'] if c.isupper())}))"),
    },
  },
  {
    id: "fibonacci",
    skill: {
      description: "Returns the first n Fibonacci numbers.",
      code: py(
        "n = int(args['n'])\na, b = 0, 1\nout = []\nfor _ in range(n):\n    out.append(a)\n    a, b = b, a + b\nprint(json.dumps({'fibonacci': out}))",
      ),
    },
    paraphrase: {
      description: "Generate the Fibonacci sequence up to a given length.",
      code: py(
        "def fib(k):\n    seq = [0, 1]\n    while len(seq) < k:\n        seq.append(seq[-1] + seq[-2])\n    return seq[:k]\nprint(json.dumps({'sequence': fib(int(args['length']))}))",
      ),
    },
    sharesWords: {
      description: "Returns the first n square numbers.",
      code: py("print(json.dumps({'squares': [i * i for i in range(1, int(args['n']) + 1)]}))"),
    },
  },
  {
    id: "bmi",
    skill: {
      description: "Computes body mass index from weight in kilograms and height in meters.",
      code: py("bmi = args['weight'] / args['height'] ** 2\nprint(json.dumps({'bmi': round(bmi, 1)}))"),
    },
    paraphrase: {
      description: "Calculate a person's BMI given their weight (kg) and height (m).",
      code: py("w = float(args['kg'])\nh = float(args['m'])\nprint(json.dumps({'result': round(w / (h * h), 1)}))"),
    },
    sharesWords: {
      description: "Converts a weight from kilograms to pounds.",
      code: py("print(json.dumps({'pounds': args['kg'] * 2.20462}))"),
    },
  },
  {
    id: "json_keys",
    skill: {
      description: "Lists the top-level keys of a JSON object.",
      code: py("print(json.dumps({'keys': sorted(json.loads(args['json']).keys())}))"),
    },
    paraphrase: {
      description: "Return the names of the fields at the top of a JSON document.",
      code: py("doc = json.loads(args['document'])\nnames = [k for k in doc]\nnames.sort()\nprint(json.dumps({'fields': names}))"),
    },
    sharesWords: {
      description: "Pretty-prints a JSON object with sorted keys.",
      code: py("print(json.dumps(json.loads(args['json']), indent=2, sort_keys=True))"),
    },
  },
  {
    id: "hex_rgb",
    skill: {
      description: "Converts a hex color like #ff8800 to RGB components.",
      code: py("h = args['hex'].lstrip('#')\nprint(json.dumps({'r': int(h[0:2], 16), 'g': int(h[2:4], 16), 'b': int(h[4:6], 16)}))"),
    },
    paraphrase: {
      description: "Parse a hexadecimal colour code into red, green and blue values.",
      code: py(
        "code = args['color'].replace('#', '')\nr, g, b = (int(code[i:i + 2], 16) for i in (0, 2, 4))\nprint(json.dumps({'rgb': [r, g, b]}))",
      ),
    },
    sharesWords: {
      description: "Converts RGB components to a color name when one matches.",
      code: py(
        "names = {(255, 0, 0): 'red', (0, 128, 0): 'green', (0, 0, 255): 'blue'}\nprint(json.dumps({'name': names.get((args['r'], args['g'], args['b']), '')}))",
      ),
    },
  },
  {
    id: "url_params",
    skill: {
      description: "Parses the query parameters of a URL into a dictionary.",
      code: py(
        "from urllib.parse import urlparse, parse_qs\nq = parse_qs(urlparse(args['url']).query)\nprint(json.dumps({k: v[0] for k, v in q.items()}))",
      ),
    },
    paraphrase: {
      description: "Extract the key/value pairs from a URL's query string.",
      code: py(
        "query = args['link'].split('?', 1)[1] if '?' in args['link'] else ''\npairs = dict(p.split('=', 1) for p in query.split('&') if '=' in p)\nprint(json.dumps({'params': pairs}))",
      ),
    },
    sharesWords: {
      description: "Returns the domain name of a URL.",
      code: py("from urllib.parse import urlparse\nprint(json.dumps({'domain': urlparse(args['url']).netloc}))"),
    },
  },
  {
    id: "roman",
    skill: {
      description: "Converts an integer to Roman numerals.",
      code: py(
        "n = int(args['n'])\nvals = [(1000, 'M'), (900, 'CM'), (500, 'D'), (400, 'CD'), (100, 'C'), (90, 'XC'), (50, 'L'), (40, 'XL'), (10, 'X'), (9, 'IX'), (5, 'V'), (4, 'IV'), (1, 'I')]\nout = ''\nfor v, s in vals:\n    while n >= v:\n        out += s\n        n -= v\nprint(json.dumps({'roman': out}))",
      ),
    },
    paraphrase: {
      description: "Write a whole number in Roman numeral notation.",
      code: py(
        "num = int(args['number'])\nsyms = ['M', 'CM', 'D', 'CD', 'C', 'XC', 'L', 'XL', 'X', 'IX', 'V', 'IV', 'I']\nvalues = [1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1]\nres = []\nfor i, v in enumerate(values):\n    count, num = divmod(num, v)\n    res.append(syms[i] * count)\nprint(json.dumps({'result': ''.join(res)}))",
      ),
    },
    sharesWords: { description: "Converts an integer to binary.", code: py("print(json.dumps({'binary': bin(int(args['n']))[2:]}))") },
  },
  {
    id: "truncate",
    skill: {
      description: "Shortens a text to a maximum length, adding an ellipsis when it was cut.",
      code: py("t = args['text']\nm = int(args['max'])\nprint(json.dumps({'text': t if len(t) <= m else t[:m - 1] + '…'}))"),
    },
    paraphrase: {
      description: "Truncate a string to at most N characters and append an ellipsis if truncated.",
      code: py("s, limit = args['s'], args['n']\nif len(s) > limit:\n    s = s[:limit - 1] + '…'\nprint(json.dumps({'result': s}))"),
    },
    sharesWords: {
      description: "Pads a text to a minimum length with spaces.",
      code: py("print(json.dumps({'text': args['text'].ljust(int(args['min']))}))"),
    },
  },
  {
    id: "compound",
    skill: {
      description: "Computes compound interest on a principal over a number of years.",
      code: py("p, r, y = args['principal'], args['rate'], args['years']\nprint(json.dumps({'amount': p * (1 + r) ** y}))"),
    },
    paraphrase: {
      description: "Calculate the final balance of an investment with yearly compounding.",
      code: py(
        "balance = float(args['amount'])\nfor _ in range(int(args['years'])):\n    balance *= 1 + float(args['interest'])\nprint(json.dumps({'balance': balance}))",
      ),
    },
    sharesWords: {
      description: "Computes the monthly payment of a loan over a number of years.",
      code: py(
        "p, r, y = args['principal'], args['rate'] / 12, args['years'] * 12\nprint(json.dumps({'payment': p * r / (1 - (1 + r) ** -y)}))",
      ),
    },
  },
];
