import json
import re
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

from creagraph.core.io import InputError
from creagraph.tig.adapters import load_noveltybench_curated
from creagraph.tig.atoms import (
    MAX_ATOMS,
    MIN_ATOMS,
    AtomExtractor,
    OfflineExtractor,
    OpenAIChatExtractor,
    PreExtractedAtoms,
    assign_types,
    atom_form,
    atoms_from_llm_reply,
    build_extraction_messages,
    chunk_phrases,
    is_grounded,
    parse_json_lenient,
)
from creagraph.tig.schema import ATOM_TYPES, Atom, Response

from .conftest import CALM_IDEAS, calm_population


def test_chunk_phrases_spans_and_cues():
    idea = ("An hourglass where the sand turns into birds, a metaphor for time slipping away, "
            "shown in extreme close-up.")
    phrases = chunk_phrases(idea)
    assert all(idea[p.start:p.end] == p.text for p in phrases)
    found = {p.text: p.cue for p in phrases}
    assert found["turns into birds"] == "mechanism"
    assert found["time slipping away"] == "purpose"
    assert found["extreme close-up"] == "perspective"
    assert "hourglass" in found and "shown" not in found


def test_chunk_phrases_setting_cue_joiners_and_minimum():
    phrases = chunk_phrases("A lighthouse made of stacked books stands in a stormy sea.")
    assert [(p.text, p.cue) for p in phrases] == [
        ("lighthouse", None), ("made of stacked books", "mechanism"), ("stormy sea", "setting")
    ]
    # never split into single words to reach a count (issue 15)
    assert [p.text for p in chunk_phrases("George Washington!")] == [
        "George Washington"]
    assert [p.text for p in chunk_phrases("Okapi")] == ["Okapi"]
    assert chunk_phrases("") == [] and chunk_phrases("It is what it is.") == []


def test_grounding_and_forms():
    assert atom_form("  “Glass Jars”, ") == "glass jars"
    assert is_grounded("glass jars", "A glass jar of fireflies")
    assert is_grounded("Firefly", "A glass jar of fireflies")
    assert not is_grounded("lantern", "A glass jar of fireflies")
    assert not is_grounded("", "anything")


def test_assign_types_uses_similarity_cues_and_bias():
    vectors = np.eye(3, dtype=np.float32)
    prototypes = {kind: np.eye(3, dtype=np.float32)[[min(i, 2)]]
                  for i, kind in enumerate(ATOM_TYPES)}
    types, scores = assign_types(vectors, prototypes, [None, None, None])
    assert [ATOM_TYPES[t] for t in types] == ["carrier", "motif", "mechanism"]  # tie: first
    types, scores = assign_types(vectors, prototypes, [None, "purpose", "purpose"])
    assert [ATOM_TYPES[t] for t in types] == ["carrier", "motif", "purpose"]
    assert scores.shape == (3, len(ATOM_TYPES))
    bias = np.zeros((3, len(ATOM_TYPES)))
    bias[0, ATOM_TYPES.index("setting")] = 2.0
    types, _ = assign_types(vectors, prototypes, [None] * 3, bias=bias)
    assert ATOM_TYPES[types[0]] == "setting"


def test_offline_extractor_types_clear_examples(offline_extractor):
    assert isinstance(offline_extractor, AtomExtractor)
    ideas = [
        "A jellyfish made of stained glass drifts in a cathedral.",
        "A lighthouse made of stacked books stands in a stormy sea to symbolize knowledge.",
        "A teacup holding a tiny ocean storm, viewed from above.",
    ]
    responses = [Response("t", "b", "m", i, x) for i, x in enumerate(ideas)]
    atoms = [{a.text: a.type for a in found} for found in offline_extractor.extract(responses)]
    assert atoms[0] == {"jellyfish": "carrier", "made of stained glass": "mechanism",
                        "cathedral": "setting"}
    assert atoms[1]["lighthouse"] == "carrier" and atoms[1]["knowledge"] == "purpose"
    assert atoms[1]["stormy sea"] == "setting"
    assert atoms[2]["teacup"] == "carrier" and atoms[2]["viewed from above"] == "perspective"


def test_offline_extractor_drops_lighting_when_not_needed(offline_extractor):
    idea = ("A potted plant with soft green leaves on a windowsill bathed in warm golden light, "
            "conveying serenity.")
    (atoms,) = offline_extractor.extract([Response("t", "b", "m", 0, idea)])
    texts = [a.text for a in atoms]
    assert "warm golden light" not in texts
    assert "potted plant" in texts and "serenity" in texts


def test_offline_atoms_are_grounded_and_counted(offline_extractor):
    responses = calm_population() + load_noveltybench_curated(task_ids=["curated-5"])
    extracted = offline_extractor.extract(responses)
    for response, atoms in zip(responses, extracted, strict=True):
        content_words = len(chunk_phrases(response.core_idea))
        assert len(atoms) <= MAX_ATOMS
        if content_words >= MIN_ATOMS:
            assert len(atoms) >= MIN_ATOMS, response.core_idea
        # a verbatim span: nothing invented (of the Core Idea, or of the generation's next
        # sentence when the Core Idea only restates the brief)
        text = response.core_idea if any(a.text in response.core_idea for a in atoms) \
            else response.visual_description
        for atom in atoms:
            assert atom.type in ATOM_TYPES
            assert atom.text in text
    # extraction of one response does not depend on the others in the batch
    alone = offline_extractor.extract(responses[:1])
    assert alone[0] == extracted[0]


def test_pre_extracted_atoms_check_grounding_and_missing():
    response = Response("t", "b", "m", 0, "A glass whale swallowing the moon.")
    good = PreExtractedAtoms({response.response_id: [Atom("carrier", "glass whale"),
                                                     Atom("carrier", "Glass whale")]})
    assert good.extract([response]) == [[Atom("carrier", "glass whale")]]
    invented = PreExtractedAtoms({response.response_id: [Atom("motif", "sun")]})
    with pytest.raises(InputError, match="'sun' of response 't\\|m\\|0' does not occur"):
        invented.extract([response])
    with pytest.raises(InputError, match="no atoms for response"):
        PreExtractedAtoms({}).extract([response])
    assert PreExtractedAtoms({}, missing="empty").extract([response]) == [[]]


@pytest.mark.parametrize(
    "reply",
    [
        '{"atoms": [{"type": "carrier", "text": "glass whale"}]}',
        '```json\n{"atoms": [{"type": "carrier", "text": "glass whale"},]}\n```',
        'Here you go:\n{"atoms": [\n  // the object\n'
        '  {"type": "carrier", "text": "glass whale"},\n]}\nHope this helps.',
        '<think>the whale carries it</think>[{"type": "carrier", "text": "glass whale"}]',
        "{“atoms”: [{“type”: “carrier”, “text”: “glass whale”}]}",
    ],
)
def test_parse_json_lenient_repairs(reply):
    data = parse_json_lenient(reply)
    items = data["atoms"] if isinstance(data, dict) else data
    assert items == [{"type": "carrier", "text": "glass whale"}]


def test_parse_json_lenient_gives_up_clearly():
    with pytest.raises(ValueError, match="no JSON could be recovered"):
        parse_json_lenient("I cannot help with that.")


def test_atoms_from_llm_reply_filters():
    idea = "A glass whale swallowing the moon over a sleeping city."
    reply = json.dumps({"atoms": [
        {"type": "Carrier", "text": "glass whale"},
        {"type": "setting", "text": "sleeping city"},
        {"type": "colour", "text": "moon"},          # unknown type
        {"type": "motif", "text": "sun"},            # not in the idea
        {"type": "carrier", "text": "Glass Whale"},  # duplicate form
        {"type": "mechanism", "text": "swallowing the moon"},
    ]})
    assert atoms_from_llm_reply(reply, idea) == [
        Atom("carrier", "glass whale"), Atom("setting", "sleeping city"),
        Atom("mechanism", "swallowing the moon")]
    by_type = atoms_from_llm_reply('{"motif": ["moon"], "setting": "city"}', idea)
    assert by_type == [Atom("motif", "moon"), Atom("setting", "city")]


def test_extraction_messages():
    response = Response("t", "Show calm.", "m", 0, "A fern in a jar.")
    messages = build_extraction_messages(response)
    assert messages[0]["role"] == "system" and "perspective" in messages[0]["content"]
    assert "A fern in a jar." in messages[1]["content"]


class _ChatHandler(BaseHTTPRequestHandler):
    failures_left = 0
    seen: list = []

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append((self.path, self.headers.get("Authorization"), body))
        if type(self).failures_left > 0:
            type(self).failures_left -= 1
            self.send_response(503)
            self.end_headers()
            return
        idea = body["messages"][1]["content"].split("Core Idea: ", 1)[1]
        first = idea.split()[1]
        content = ("```json\n" + json.dumps({"atoms": [
            {"type": "carrier", "text": first}, {"type": "motif", "text": "unicorn"}]})
            + "\n```")
        payload = json.dumps({"id": "x", "object": "chat.completion", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content},
             "finish_reason": "stop"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture()
def chat_server():
    _ChatHandler.failures_left = 0
    _ChatHandler.seen = []
    server = HTTPServer(("127.0.0.1", 0), _ChatHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_openai_extractor_against_local_server(chat_server):
    _ChatHandler.failures_left = 1  # one 503, then success after a retry
    extractor = OpenAIChatExtractor(chat_server, "tiny-model", "secret", backoff=0.01)
    responses = [Response("t", "b", "m", 0, "A fern unfurling in a jar."),
                 Response("t", "b", "m", 1, "A kite made of letters.")]
    atoms = extractor.extract(responses)
    assert atoms == [[Atom("carrier", "fern")], [Atom("carrier", "kite")]]  # unicorn dropped
    path, auth, body = _ChatHandler.seen[-1]
    assert path == "/v1/chat/completions" and auth == "Bearer secret"
    assert body["model"] == "tiny-model" and body["temperature"] == 0
    assert body["messages"] == build_extraction_messages(responses[1])
    assert len(_ChatHandler.seen) == 3


def test_openai_extractor_configuration(monkeypatch, chat_server):
    for name in ("CREAGRAPH_LLM_BASE_URL", "OPENAI_BASE_URL", "CREAGRAPH_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="no LLM endpoint"):
        OpenAIChatExtractor()
    monkeypatch.setenv("CREAGRAPH_LLM_BASE_URL", chat_server)
    with pytest.raises(ValueError, match="no LLM model"):
        OpenAIChatExtractor()
    monkeypatch.setenv("CREAGRAPH_LLM_MODEL", "env-model")
    extractor = OpenAIChatExtractor(max_retries=0)
    assert extractor.base_url == chat_server and extractor.model == "env-model"
    _ChatHandler.failures_left = 5
    with pytest.raises(RuntimeError, match="giving up after 1 attempts: HTTP 503"):
        extractor.complete([{"role": "user", "content": "hi"}])


def test_calm_fixture_has_three_samples_per_model():
    assert all(len(v) == 3 for v in CALM_IDEAS.values())


def test_offline_extractor_without_phrases(offline_extractor):
    assert offline_extractor.extract([Response("t", "b", "m", 0, "... !?")]) == [[]]
    (emoji,) = offline_extractor.extract([Response("t", "b", "m", 0, "Sure! 🍕 🍕")])
    assert [a.text for a in emoji] == ["🍕"]  # an emoji answer is an atom
    assert OfflineExtractor(offline_extractor.embedder).extract([]) == []


def test_a_runaway_response_is_read_only_up_to_its_first_words(offline_extractor):
    """One 100,000-word response must not stall extraction: only the first
    MAX_IDEA_WORDS words are chunked and embedded (bounded work)."""
    import time

    from creagraph.tig.atoms import MAX_IDEA_WORDS, idea_head

    head = "A paper lantern floating above a drowned cathedral at dusk."
    tail = " ".join(f"zq{i}word" for i in range(100_000))
    response = Response("t", "Make calm visible.", "m", 0, f"{head} {tail}")
    start = time.perf_counter()
    (atoms,) = offline_extractor.extract([response])
    assert time.perf_counter() - start < 60
    assert atoms and all(atom.text in idea_head(response.core_idea) for atom in atoms)
    later = {f"zq{i}word" for i in range(MAX_IDEA_WORDS, 100_000)}
    assert not any(set(atom.text.split()) & later for atom in atoms)
    assert idea_head(head) == head and len(idea_head(tail).split()) == MAX_IDEA_WORDS


# Real Core Ideas (NoveltyBench curated, MCTB Alternative Uses) whose phrases were graded
# fragments in issue 27, with the content phrases they must give instead.
REAL_FRAGMENTS = [
    ("Andrew Wiles won the Fields Medal in 1998.", ["Andrew Wiles", "Fields Medal", "1998"]),
    ("Emma had rescued Max, a scruffy terrier mix, from the local shelter three years ago, "
     "and they had been inseparable ever since.",
     ["Emma", "rescued Max", "scruffy terrier mix", "local shelter"]),
    ("Like venom coursing through my veins,", ["venom", "veins"]),
    ("There's no single \"least well-suited\" breed, as individual dogs vary greatly.",
     ["breed", "individual dogs"]),
    ("Pittsburgh's past pollution contributed significantly.", ["Pittsburgh's past pollution"]),
    ("Magnet maze tabletop toy moving a steel ball from below",
     ["Magnet maze tabletop toy", "steel ball", "from below"]),
    ("Temporary phone stand", ["phone stand"]),
    ("Miniature escape room puzzle box", ["escape room puzzle box"]),
    ("Makeshift compass needle when magnetized", ["compass needle"]),
]


@pytest.mark.parametrize(("idea", "expected"), REAL_FRAGMENTS)
def test_chunk_phrases_gives_content_phrases_not_fragments(idea, expected):
    assert [p.text for p in chunk_phrases(idea)] == expected


def test_no_bare_words_or_trailing_verbs_on_real_responses():
    """On real NoveltyBench first sentences: no atom candidate is a lone verb form,
    adjective, adverb or generic noun when the idea has other phrases, and none ends in an
    adverb or a verb of the unambiguous list (issue 27: ideas, not fragments)."""
    from creagraph.tig import atoms as module

    responses = load_noveltybench_curated(task_ids=["curated-0", "curated-1", "curated-10",
                                                    "curated-11"])
    checked = 0
    for response in responses:
        phrases = chunk_phrases(response.core_idea)
        for phrase in phrases:
            words = [w.casefold() for w in module._WORD.findall(phrase.text)]
            if phrase.cue == "perspective":
                continue
            assert not module._is_adverb(words[-1]), phrase.text
            if len(words) > 1:
                assert words[-1] not in module._VERBS, phrase.text
                assert not module._is_participle(words[-1]), phrase.text
            elif len(phrases) > 1 and phrase.cue != "purpose":
                assert not module._is_bare_word(response.core_idea, phrase), phrase.text
            checked += 1
    assert checked > 500


def test_short_answer_idea_is_one_content_phrase():
    from creagraph.tig.atoms import short_answer_idea

    brief = "List alternative uses for a bottle."
    cases = {
        "Rolling pin for dough and pastry": "Rolling pin",
        "Bottle cap for a jar": "Bottle cap",
        "Tool for aerating compacted soil": "aerating compacted soil",
        "Self-watering system for plants using inverted technique": "Self-watering system",
    }
    for answer, head in cases.items():
        found = short_answer_idea(answer, "use", brief)
        assert found is not None and found.text == head and found.cue == "idea"
        assert answer[found.start:found.end] == found.text
    thing = short_answer_idea("A slamming door at midnight", "instance",
                              "What is a surprising thing that makes a NOISE?")
    assert thing is not None and thing.text == "slamming door"
    outcome = short_answer_idea("Night shifts would vanish, and cities would stay awake",
                                "consequence")
    assert outcome is not None and outcome.text == "Night shifts would vanish"
    assert short_answer_idea("A fern in a jar", "visual") is None
    assert short_answer_idea("", "use") is None


def test_offline_extractor_gives_a_use_answer_one_idea(offline_extractor):
    brief = "List alternative uses for a bottle."
    responses = [Response("aut-bottle", brief, "m", i, text, family="Alternative Uses")
                 for i, text in enumerate(["Rolling pin for dough and pastry",
                                           "Makeshift compass needle when magnetized"])]
    extracted = offline_extractor.extract(responses)
    assert extracted == [[Atom("carrier", "Rolling pin")], [Atom("carrier", "compass needle")]]


def test_a_core_idea_restating_the_brief_falls_back_to_the_next_sentence(offline_extractor):
    """Real NoveltyBench generations whose first sentence only restates the prompt
    ("Happy New Year!", "There's no single 'safest' 4-digit lock combination."), and a
    number named in digits ("I picked the number 53."): each gets atoms that say more than
    the brief, verbatim phrases of the generation."""
    from creagraph.tig.atoms import following_sentence_phrases
    from creagraph.tig.brief import brief_terms, is_from_brief

    responses = load_noveltybench_curated(task_ids=["curated-14", "curated-90", "curated-95"])
    terms = {r.brief: brief_terms(r.brief, instructions=True) for r in responses}
    restating = [r for r in responses
                 if all(is_from_brief(atom_form(p.text), terms[r.brief])
                        for p in chunk_phrases(r.core_idea))]
    assert len(restating) >= 100  # the case is common, not contrived
    extracted = offline_extractor.extract(restating)
    without = [r.core_idea for r, atoms in zip(restating, extracted, strict=True)
               if not any(not is_from_brief(atom_form(a.text), terms[r.brief]) for a in atoms)]
    assert len(without) <= 0.02 * len(restating), without[:5]
    for r, atoms in zip(restating, extracted, strict=True):
        assert all(a.text in r.visual_description for a in atoms)
    new_year = next(r for r in restating if r.core_idea == "Happy New Year!"
                    and len(r.visual_description) > 40)
    fallback = following_sentence_phrases(new_year, terms[new_year.brief])
    assert fallback and all(p.text in new_year.visual_description for p in fallback)
    # without a following sentence there is nothing to fall back to
    alone = Response("t", new_year.brief, "m", 0, "Happy New Year!",
                     visual_description="Happy New Year!")
    assert following_sentence_phrases(alone, terms[new_year.brief]) is None
    # "I picked the number 53." names a number the brief does not: it never restates it
    named = [r for r in responses if r.task_id == "curated-90"
             and re.search(r"\bnumber \d+", r.core_idea)
             and not re.search(r"\bnumber (?:1|100)\b", r.core_idea)]
    assert len(named) >= 20 and not set(map(id, named)) & set(map(id, restating))
