#!/usr/bin/python3
"""Builds the tiny BERT-shaped sentence-embedding fixture in test/fixtures/models/tiny-embedder/.

Run with the Debian interpreter, which has `onnx` and `numpy`:

    /usr/bin/python3 scripts/build-tiny-embedder.py [output_dir]

The model is not trained. It has the inputs and output of a Hugging Face BERT export
(input_ids, attention_mask, token_type_ids -> last_hidden_state [batch, seq, hidden]) so that it
loads through the real transformers.js feature-extraction path, and its weights come from a fixed
seed, so every run writes byte-identical files. Each token is embedded independently:

    last_hidden_state = tanh((word[ids] + type[token_type_ids] + 0.1 * position[pos]) @ W + b) * mask

No attention means one text's vectors do not depend on what else is in the batch, which keeps
"batch equals one by one" exact. Mean pooling then behaves like a smoothed bag of words: texts
sharing words get similar vectors, which is all the retrieval tests need.

It also writes onnx/model_quantized.onnx (dtype 'q8' in transformers.js): the same model with the
word table stored as uint8 and dequantized in the graph.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 20240917
HIDDEN = 32
MAX_POSITIONS = 128
SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']

# Common English words plus the vocabulary of typical tool descriptions. Words outside this list
# are split into the single-character pieces below, so nothing becomes [UNK] except odd symbols.
WORDS = """
a about above account accounts across action actions activity add added address addresses after
again against age agent air airline airport alarm album alert alerts all allow along also amount
an analysis analyze and animal another answer any api app application apply appointment
appointments are area around array article articles artist as ask asset at attachment audio
author authors auto available average back balance bank bar base based basic be because become
been before being below best better between big bill billing bills birthday block blog body book
booking books both box brand breaking build business but button buy by cache calculate calculator
calendar call calls camera can cancel capital car card cards cart case cash catalog categories
category cell center change channel channels chart chat check chemical city class clean clear
click client climate clock close cloud code coin coins color column comment comments common
company compare complete compute condition conditions config connect contact contacts content
context convert conversion coordinates copy cost could count countries country coupon course
create created credit crypto cryptocurrency currency current customer daily data database date
dates day days deal debit default delete delivery depart departure describe description design
detail details detect device dictionary did different directions directory discount disk display
distance do document documents does domain down download draft drive driving due each earth
easy edit education email emails employee end energy engine english entity entry error event
events every exchange expense export face fact fast feature feed fetch file files filter final
finance financial find first fit flight flights flow folder follow food for forecast form format
free friend from full fund funds game games generate genre get gift give global go goal good
graph group groups guide has have health height help here high history holiday home hotel hotels
hour hours how humidity id identify image images import in include income index info information
input insert insurance into invoice invoices ip is issue issues it item items its job jobs join
joke jokes json just keep key keyword keywords kind know label language languages last latest
latitude launch lead league learn length level library license like limit line link links list
lists live load loan local location locations lock log login long longitude look lookup low lyrics
mail make manage map maps market match matches math max media meeting meetings member members
menu message messages metadata method metric minute minutes mobile mode model modify money month
monthly more most movie movies much music my name names nearby need network new news next note
notes notification notifications now number numbers object of off offer offers on one online
only open option options or order orders other out output over owner page pages paid parameter
parameters parse part pass password pay payment payments people per period person phone photo
photos pick place places plan play player players playlist point points policy pool popular post
posts power predict premium price prices print product products profile project projects
property provide public publish purchase query question questions quote quotes radio random range
rate rates rating read real recent recipe recipes record records reference region register related
release remind reminder reminders remove rent rental repeat replace reply report reports request
requests reservation reserve reset resource response restaurant restaurants result results return
review reviews ride road room rooms route rule run sales save schedule score scores search season
second security see select sell send sensor sentence series server service services session set
share ship shipping shop shopping short show sign similar site size sms social song songs sort
source space speed sport sports start state statistics status step stock stocks stop storage
store stream street string subject submit subscription summary support symbol system table tag
tags take task tasks tax team teams temperature template terms test text than that the their them
then there these they thing this through ticket tickets time timezone title to today token tool
tools top topic total track tracking trade traffic train transaction transactions transfer
translate translation travel trend trending trip true tv tweet type under unit units up update
upload url usage use user username users using valid validate value values verify version video
videos view visit voice volume want was watch water way we weather web website week weekly weight
what when where which while who wikipedia will wind with word words work world write year yearly
years yes you your zip zone
""".split()
LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789'
PUNCTUATION = list('.,:;!?-_/()[]{}\'"@#$%&*+=<>|~`^')


def build_vocab():
    vocab = list(SPECIALS) + PUNCTUATION + list(LETTERS) + ['##' + c for c in LETTERS]
    seen = set(vocab)
    for word in WORDS:
        if word not in seen:
            vocab.append(word)
            seen.add(word)
    return vocab


def tokenizer_json(vocab):
    ids = {token: index for index, token in enumerate(vocab)}
    special = lambda name: {'id': name, 'ids': [ids[name]], 'tokens': [name]}
    cls = {'SpecialToken': {'id': '[CLS]', 'type_id': 0}}
    sep = lambda type_id: {'SpecialToken': {'id': '[SEP]', 'type_id': type_id}}
    sequence = lambda name, type_id: {'Sequence': {'id': name, 'type_id': type_id}}
    return {
        'version': '1.0',
        'truncation': None,
        'padding': None,
        'added_tokens': [
            {'id': ids[token], 'content': token, 'single_word': False, 'lstrip': False,
             'rstrip': False, 'normalized': False, 'special': True}
            for token in SPECIALS
        ],
        'normalizer': {'type': 'BertNormalizer', 'clean_text': True, 'handle_chinese_chars': True,
                       'strip_accents': None, 'lowercase': True},
        'pre_tokenizer': {'type': 'BertPreTokenizer'},
        'post_processor': {
            'type': 'TemplateProcessing',
            'single': [cls, sequence('A', 0), sep(0)],
            'pair': [cls, sequence('A', 0), sep(0), sequence('B', 1), sep(1)],
            'special_tokens': {'[CLS]': special('[CLS]'), '[SEP]': special('[SEP]')},
        },
        'decoder': {'type': 'WordPiece', 'prefix': '##', 'cleanup': True},
        'model': {'type': 'WordPiece', 'unk_token': '[UNK]', 'continuing_subword_prefix': '##',
                  'max_input_chars_per_word': 100, 'vocab': ids},
    }


def graph(vocab_size, rng, quantized):
    word = rng.normal(0, 1, (vocab_size, HIDDEN)).astype(np.float32)
    word[0] = 0  # [PAD]
    types = rng.normal(0, 0.1, (2, HIDDEN)).astype(np.float32)
    positions = rng.normal(0, 1, (MAX_POSITIONS, HIDDEN)).astype(np.float32) * np.float32(0.1)
    weight = (rng.normal(0, 1, (HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32)
    bias = rng.normal(0, 0.1, (HIDDEN,)).astype(np.float32)

    nodes, initializers = [], [
        numpy_helper.from_array(types, 'type_table'),
        numpy_helper.from_array(positions, 'position_table'),
        numpy_helper.from_array(weight, 'projection'),
        numpy_helper.from_array(bias, 'projection_bias'),
        numpy_helper.from_array(np.array(0, dtype=np.int64), 'zero'),
        numpy_helper.from_array(np.array(1, dtype=np.int64), 'one'),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), 'last_axis'),
    ]
    if quantized:
        low, high = float(word.min()), float(word.max())
        scale = np.float32((high - low) / 255)
        zero_point = np.uint8(round(-low / scale))
        codes = np.clip(np.round(word / scale) + zero_point, 0, 255).astype(np.uint8)
        initializers += [
            numpy_helper.from_array(codes, 'word_codes'),
            numpy_helper.from_array(np.array(scale, dtype=np.float32), 'word_scale'),
            numpy_helper.from_array(np.array(zero_point, dtype=np.uint8), 'word_zero_point'),
        ]
        nodes.append(helper.make_node('DequantizeLinear', ['word_codes', 'word_scale', 'word_zero_point'], ['word_table']))
    else:
        initializers.append(numpy_helper.from_array(word, 'word_table'))

    nodes += [
        helper.make_node('Gather', ['word_table', 'input_ids'], ['words']),
        helper.make_node('Gather', ['type_table', 'token_type_ids'], ['types']),
        helper.make_node('Shape', ['input_ids'], ['input_shape']),
        helper.make_node('Gather', ['input_shape', 'one'], ['sequence_length']),
        helper.make_node('Range', ['zero', 'sequence_length', 'one'], ['position_ids']),
        helper.make_node('Gather', ['position_table', 'position_ids'], ['positions']),
        helper.make_node('Add', ['words', 'types'], ['words_types']),
        helper.make_node('Add', ['words_types', 'positions'], ['summed']),
        helper.make_node('MatMul', ['summed', 'projection'], ['projected']),
        helper.make_node('Add', ['projected', 'projection_bias'], ['biased']),
        helper.make_node('Tanh', ['biased'], ['activated']),
        helper.make_node('Cast', ['attention_mask'], ['mask_float'], to=TensorProto.FLOAT),
        helper.make_node('Unsqueeze', ['mask_float', 'last_axis'], ['mask_3d']),
        helper.make_node('Mul', ['activated', 'mask_3d'], ['last_hidden_state']),
    ]
    ids_input = lambda name: helper.make_tensor_value_info(name, TensorProto.INT64, ['batch_size', 'sequence_length'])
    model = helper.make_model(
        helper.make_graph(
            nodes,
            'tiny_embedder',
            [ids_input('input_ids'), ids_input('attention_mask'), ids_input('token_type_ids')],
            [helper.make_tensor_value_info('last_hidden_state', TensorProto.FLOAT, ['batch_size', 'sequence_length', HIDDEN])],
            initializers,
        ),
        opset_imports=[helper.make_opsetid('', 13)],
        producer_name='toolsel build-tiny-embedder.py',
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def write_json(path, value):
    with open(path, 'w', encoding='utf-8') as file:
        json.dump(value, file, indent=1, ensure_ascii=False)
        file.write('\n')


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, 'test/fixtures/models/tiny-embedder')
    os.makedirs(os.path.join(out, 'onnx'), exist_ok=True)
    vocab = build_vocab()

    for quantized, name in [(False, 'model.onnx'), (True, 'model_quantized.onnx')]:
        # Same seed for both files: the quantized model is the fp32 one with a rounded word table.
        model = graph(len(vocab), np.random.default_rng(SEED), quantized)
        onnx.save(model, os.path.join(out, 'onnx', name))

    write_json(os.path.join(out, 'tokenizer.json'), tokenizer_json(vocab))
    write_json(os.path.join(out, 'tokenizer_config.json'), {
        'tokenizer_class': 'BertTokenizer', 'do_lower_case': True, 'model_max_length': MAX_POSITIONS,
        'cls_token': '[CLS]', 'sep_token': '[SEP]', 'pad_token': '[PAD]', 'unk_token': '[UNK]',
        'mask_token': '[MASK]', 'clean_up_tokenization_spaces': True,
    })
    write_json(os.path.join(out, 'config.json'), {
        'model_type': 'bert', 'architectures': ['BertModel'], 'hidden_size': HIDDEN,
        'vocab_size': len(vocab), 'max_position_embeddings': MAX_POSITIONS, 'type_vocab_size': 2,
        'num_hidden_layers': 1, 'num_attention_heads': 1, 'intermediate_size': HIDDEN,
        'pad_token_id': 0,
    })
    write_json(os.path.join(out, 'toolsel.json'), {'pooling': 'mean', 'normalize': True})
    print(f'wrote {out}: vocabulary {len(vocab)} tokens, hidden {HIDDEN}')


if __name__ == '__main__':
    main()
