import { describe, expect, it } from 'vitest'
import { docstringArguments } from '../../../src/library/importers/docstring-arguments.ts'
import {
  cleanDocstring,
  parsePythonFunctions,
} from '../../../src/library/importers/parse-python-functions.ts'
import { pythonLiteral } from '../../../src/library/importers/python-literal.ts'
import { pythonTypeSchema } from '../../../src/library/importers/python-type-schema.ts'

describe('parsePythonFunctions', () => {
  it('reads parameters with annotations, defaults and variadics', () => {
    const source = `from typing import *\n\ndef f(a, b: Dict[str, int] = {"x": 1}, *args, c: str = "),", **kwargs) -> Tuple[int, int]:\n    r"""Doc."""\n    return 1, 2`
    expect(parsePythonFunctions(source)).toEqual([
      {
        name: 'f',
        docstring: 'Doc.',
        parameters: [
          { name: 'a' },
          { name: 'b', annotation: 'Dict[str, int]', defaultText: '{"x": 1}' },
          { name: 'args', variadic: 'positional' },
          { name: 'c', annotation: 'str', defaultText: '"),"' },
          { name: 'kwargs', variadic: 'keyword' },
        ],
      },
    ])
  })

  it('lists top-level functions only, unless there are none', () => {
    const nested =
      'def outer(x):\n    def inner(y):\n        """Inner."""\n        return y\n    return inner(x)\n\ndef second():\n    pass'
    expect(parsePythonFunctions(nested).map((definition) => definition.name)).toEqual([
      'outer',
      'second',
    ])
    const indented = 'if True:\n    def execute_command(image):\n        pass'
    expect(parsePythonFunctions(indented).map((definition) => definition.name)).toEqual([
      'execute_command',
    ])
  })

  it('reads a docstring after comments, in single or triple quotes, and none when code comes first', () => {
    expect(parsePythonFunctions("def f():\n    # note\n    '''Triple.'''")[0].docstring).toBe(
      'Triple.',
    )
    expect(parsePythonFunctions('def f():\n    "One line."\n')[0].docstring).toBe('One line.')
    expect(
      parsePythonFunctions('def f():\n    x = 1\n    """Not a docstring."""')[0].docstring,
    ).toBeUndefined()
  })
})

describe('cleanDocstring', () => {
  it('dedents like inspect.cleandoc', () => {
    expect(cleanDocstring('\n    Title.\n\n    Args:\n        x: y\n    ')).toBe(
      'Title.\n\nArgs:\n    x: y',
    )
    expect(cleanDocstring('Title.\n    more')).toBe('Title.\nmore')
  })
})

describe('docstringArguments', () => {
  it('reads Args and Parameters sections until the next section', () => {
    const documented = docstringArguments(
      'Do.\n\nParameters:\nx1, y1 (float): A point,\n    in the plane.\nname: Who.\n\nReturns:\nfloat: Not an argument.',
    )
    expect(Object.fromEntries(documented)).toEqual({
      x1: { type: 'float', description: 'A point, in the plane.' },
      y1: { type: 'float', description: 'A point, in the plane.' },
      name: { description: 'Who.' },
    })
    expect(docstringArguments('No sections here.').size).toBe(0)
  })
})

describe('pythonTypeSchema and pythonLiteral', () => {
  it.each([
    ['str', { type: 'string' }],
    ['int', { type: 'integer' }],
    ['List[int]', { type: 'array' }],
    ['typing.Dict[str, Any]', { type: 'object' }],
    ['Optional[float]', { type: 'number' }],
    ['int or float', { type: 'number' }],
    ['Union[int, float]', { type: 'number' }],
    ['bool | None', { type: 'boolean' }],
    ['pd.DataFrame', undefined],
    ['ImagePatch', undefined],
    ['None', undefined],
  ])('maps %s', (type, schema) => {
    expect(pythonTypeSchema(type)).toEqual(schema)
  })

  it('reads literals and refuses expressions', () => {
    expect([
      pythonLiteral('True'),
      pythonLiteral('None'),
      pythonLiteral('-1.5e3'),
      pythonLiteral("'x'"),
    ]).toEqual([true, null, -1500, 'x'])
    expect(pythonLiteral('np.pi')).toBeUndefined()
    expect(pythonLiteral('[1, 2]')).toBeUndefined()
  })
})
