"""The one search service: every interface (CLI, REST, MCP, dashboard) calls ``search``.

1. Query shaping: content words (stop words out) → the index's porter stems; a word in more
   than 20 % of the memories in scope is set aside while a rarer word remains; at most the 12
   rarest are asked for (within a posting budget that keeps big stores fast).
2. Memories: FTS5 BM25 over title, subtitle, narrative, facts, concepts (weighted), then
   re-ranked by tie-breakers: the set-aside common words, how many distinct query words a
   memory holds, dates the query names, similarity to the query (semantic extra), and a share
   of the score of its neighbours in the session.
3. Facts: found in their own FTS5 index, scored on the memories' BM25 scale (the scope's
   IDF) and merged with the memories by score: one keyword ranking.
   Knowledge updates: what a later change replaced (superseded facts, the values change
   statements dropped) ranks below the change.
4. Reciprocal rank fusion (k = 60) of that ranking (0.9) and semantic-only finds (0.5).

Filters (project + global, scope, kind, tool, session, time range, pinned) are in the SQL of
every list, so they apply before ranking; dismissed rows come back only when asked for.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import math
import os
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC
from itertools import pairwise
from operator import itemgetter
from typing import Any

from aletheia import blocks, filters, ids, schema, stated, vocab
from aletheia.errors import InvalidInput
from aletheia.idents import identifier_words

# BM25 column weights (title, subtitle, narrative, facts, concepts, fts_scope, idents) for searches
# across projects, where FTS5's bm25() ranks.  Equal: weighting the title and facts twice
# changed nothing on either half of LoCoMo, and a project-scoped search (our own BM25 over
# postings) cannot see columns; fts_scope is a filter, never a score.
MEMORY_WEIGHTS = (1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0)  # … and idents (schema 7)
RRF_K = 60
# Keyword finds (memories and facts, merged by score) in the fusion with semantic-only finds.
MEMORY_WEIGHT = 0.9
# Semantic search, when on: a keyword candidate's score grows with its cosine similarity to
# the query, and the nearest memories the keywords missed enter the fusion with this weight
# (at equal weight they pushed better keyword finds out of the top 5 on LoCoMo).  Hybrid against
# keyword (WordLlama, with query expansion on): LoCoMo --split evidence +1.0 / +0.1; tunable
# coding projects (bench/coding_ablate.py --part tunable --lopo --semantic), Hit@5 mean of the 7
# +2.3 / +2.6 tool-rich, +2.5 / -0.6 talk-only (uncompressed / compressed), MRR up in most;
# LoCoMo 7.0 -> 15.1 ms a query.  Short of +3 on held-out data: off by default.
# The re-rank's strength was fitted on half the tunable parts (dev, dev-3, dev-5, dev-7, dev-9 |
# dev-extra, dev-4, dev-6, dev-8) and read on the other half, three modes each, against 4, 8,
# a share above 0.2 or above the candidates' mean, a semantic-only find put 5th at cosine >= 0.4,
# and the re-rank applied after the knowledge-update re-rankers: 2 was chosen both ways; on the
# half held back, over keyword, Hit@5 +1.17 / +0.43 (4: +1.13 / +0.31), newest-first -0.9 / -2.3
# (4: +1.1 / -4.3); LoCoMo --split evidence +0.8 / +0.8 (4: +1.0 / -0.1).  Semantic-only finds at 0.5 never reach the top 5
# on the coding parts (0.5/61 is below the keyword list's 40th); a floor or a fixed 5th place
# for them measured no gain.
SEMANTIC_WEIGHT = 0.5
SEMANTIC_RERANK = 2.0
MAX_TERMS = 12
# The index is asked for a query word's token through a word that tokenizes to it, not through
# the token itself (which FTS5 stems again: ``_fts_term``).
MATCH_TYPED = True
MAX_WORDS = 32  # content words of a long query looked up at all (the first ones)
# Okapi BM25's usual k1 (FTS5's bm25() uses the same).  0.9 / 1.6 / 2.0 on b75616c (11 tunable
# projects, mean Hit@5 gain over BM25, tool-rich plain | compressed, talk-only plain | compressed,
# against +4.67 | +10.32, +4.95 | +9.46): +5.15 | +9.51, +4.70 | +8.71; +4.30 | +10.62, +4.95 |
# +10.40; +4.01 | +11.04, +5.19 | +10.92: each trades one state for the other.
BM25_K1 = 1.2
# Length normalisation.  With term frequency counted (``TF_POOL``), 0.9 was chosen
# leave-one-project-out over the 7 tunable coding projects (bench/coding_ablate.py --part
# tunable --lopo, against 0.75 and 0.5: picked on the other six for each of the 7); merit
# (Hit@5 gain + 100 x MRR gain over plain BM25, both states) 0.9: +6.8, 0.75: +5.9, 0.5: +4.5.
# LoCoMo --split is split on it (0.75 reads better on convs 0-4, 0.9 on 5-9) and stays at or
# above plain BM25 in every category on both halves.  (Without counts 0.5 had been best: a
# long memory that repeats the word got no credit for it and the full penalty buried it.)
# A length ratio capped (min(cap, length / mean), so long tool output is not pushed further
# down) measured on ce02585, dev-3 plain | --talk-only Hit@5 77.4 | 86.5: cap 3 and 2 identical
# (few memories are that long); 1.2: 76.9 | 87.9, tool-output-only 65.2 -> 60.9, newest-first
# 75.9 -> 69.0.  Not kept.
BM25_B = 0.9
# IDF counted as if the scope held at least this many memories (0: off; a candidate row of the
# ablations).  A project's own statistics, which keep a scoped ranking free of other projects,
# are thin in a small project: at N = 34 a word in 20 memories ("image") weighs a fifth of one in
# 2 ("upload") and the memories answering with the first lose to those holding the second.  A
# floor keeps the project's own document frequencies (still nothing from other projects) and
# evens IDF's steps.  Measured at 1000 (bench/coding_ablate.py --part tunable): dev and
# dev-extra Hit@5 equal uncompressed (MRR dev-extra 0.641 -> 0.650), compressed dev 85.6 -> 85.0
# and dev-extra equal (MRR 0.606 -> 0.618); LoCoMo --split equal.  Not on: one question's worth
# either way, and dev (compressed) lost one.
MIN_SCOPE = 0
# Term frequency at query time.  Postings hold no counts (a word counts once per memory), so
# the best ``TF_POOL`` memories of that first pass are read (title, subtitle, the first
# ``TF_TEXT`` characters of the narrative, facts, concepts) and scored again with each query
# word's count in them: BM25's saturation, as plain BM25 has it.  Only the candidates, only at
# query time: nothing is added to the capture path (counts in the index cost the hook 2.5 ms).
# Per tunable coding project (bench/coding_ablate.py --part tunable --lopo), Hit@5 / MRR over
# plain BM25, mean of the 7, without -> with it (and b 0.9): uncompressed +2.5 / -0.018 ->
# +2.2 / -0.001, compressed +5.5 / +0.038 -> +6.3 / +0.052.  Pools of 30, 60, 120 and 240 and
# 1500 or 4000 characters read the same; 30 costs ~0.4 ms p50 at 50,000 (bench/scale.py).
TF_POOL = 30
TF_TEXT = 1500
# Query expansion (``aletheia.concepts``): for a concept the query names ("tests", "package
# manager", "background jobs"), the names the memories use for it (pytest, uv, celery …) are
# searched too, as one added word per query word ("a test runner's name": its postings are the
# memories holding any of the names, one index read), at this share of its IDF: an answer says
# `pytest -q -x`, not "the tests".  0: off.  Only where this service computes BM25 itself (a
# project-scoped query).  bench/coding_ablate.py --part tunable --lopo, merit (Hit@5 gain +
# 100 x MRR gain over plain BM25, mean of the 7 projects and both states): tool-rich 7.34
# without -> 11.29 at 0.8 (0.2: 8.46, 0.4: 9.77, 0.6: 10.24, 1.0: 11.24), --talk-only 8.86 ->
# 16.75 (12.16, 15.09, 16.24, 16.48); the weights below the query's own words (< 1) were the
# candidates, and 0.8 is the one chosen on the other six for most projects.  Hit@5 per project,
# 0.8 against none (ferrydock … tallyhub, uncompressed | compressed): talk-only +6.6 +1.4 +9.1
# 0 +4.3 0 +8.4 | 0 +4.2 +9.1 0 +1.4 +6.6 +16.7; tool-rich +3.8 -2.1 +5.2 -7.2 +1.1 +9.1 0 |
# 0 -1.0 +5.2 0 +4.4 +13.7 0.  LoCoMo --split unchanged (any-hit convs 5-9 +0.1).  One added
# word per query word, not one per name: a name each read better at 0.4 (tool-rich 12.1) but
# cost an index read per name (~90 µs each at 50,000).  An added word also covers its query
# word for the coverage bonus (without: tool-rich 10.24 -> 8.56 at 0.6), and adds to it: as a
# substitute only (a query word's part the better of its own and its added word's), tool-rich
# 11.29 -> 9.31, talk-only 16.62 -> 13.29.
EXPAND_WEIGHT = 0.8
EXPAND_SYNONYMS = True  # … and the plain-word synonyms (``concepts.SYNONYMS``)
# Query words expanded (the first ones the map knows): 2 and 8 read the same as 4 (LOPO merit
# tool-rich 11.29 / 11.32 / 11.32, talk-only 16.79 / 16.62 / 16.62).  Without the synonyms
# (``EXPAND_SYNONYMS``): 9.90 and 15.80.
MAX_EXPANSIONS = 4
EXPAND_COVERS = True  # an added word covers the query word it stands for (coverage bonus)
# A query word and the stop word after it, joined, that the map knows as a key ("log in" →
# "login") name that key's concept, and the first word's own one-word key is not read ("log":
# logging): a phrasal verb means something else than its first word.  bench/coding_ablate.py
# --part tunable --lopo, against off: pulseboard Hit@5 +1.4 talk-only (uncompressed), MRR
# +0.003 / +0.008 (talk-only / tool-rich), the other projects and states equal; LoCoMo --split
# equal in every category.
EXPAND_PHRASES = True
MAX_LIMIT = 200
MAX_QUERY = 2000
# Index postings the ranking may read per query (~1 µs each): keeps big stores fast.
POSTING_BUDGET = 1400
# When even the rarest word is over the budget: its newest memories ranked, first those that
# hold the next rarest words too (at most this many words together).
CUT_DEPTH = 240
CUT_WORDS = 3
# How deep each list is read before fusion; re-ranking needs more than the page shown.
DEPTH = 60
# Each further distinct query word a memory holds is worth this much more (BM25 pays as much
# for one word repeated as for two different ones; an answer usually has several).
# Switched off, Hit@5 falls in 3 of the 7 tunable coding projects uncompressed and in 5
# compressed, and rises in none (coding_ablate.py --part tunable --by-project): the most
# even-handed of the re-rankers.
COVER_BONUS = 0.5
# Tried on it and not kept (bench/coding_ablate.py --part tunable --lopo, all-7 merit tool-rich /
# talk-only against 11.33 / 16.60 on main 7999328, or 12.24 / 17.31 on 447c843): a query word in
# over 50 / 30 / 20 % of the scope not counting (9.34 / 5.36 / 6.75, talk-only 13.98 / 13.17 /
# 13.03); a memory longer than the mean at (mean / length) ** 0.5 or ** 1 of the bonus (10.83 /
# 10.04, talk-only 16.64 / 16.54); an added word (``EXPAND_COVERS``) covering as 0.75 / 0.5 /
# 0.25 of a query word's own (11.66 / 10.49 / 9.69, talk-only 17.26 / 17.29 / 17.05).  Words of
# the project's checkout path: set aside 10.46 (folders above the project only 11.94, but
# talk-only 16.45: pulseboard Hit@5 -1.4), no coverage 9.83 / 11.04; in a tool event, a word held
# only in the path counting for nothing 11.64 (pebblepost MRR +0.009, quillstack -0.030
# uncompressed; talk-only has no tool events) or also the tool input's field names 10.06 (a Bash
# event's `"command":` is what "what's the command for …" asks for).
# Tried for tool-rich stores and not kept (bench/coding_ablate.py --part tunable --lopo, merit over
# the 7 projects before dev-3, tool-rich 12.52, talk-only 18.11, unless said; none of these touch a
# talk-only store): the coverage bonus counting a word by its IDF against the query's mean 9.26
# (talk-only 15.28); in a tool event only the words of its head (title, input, first 1000
# characters) 8.49, or the bonus scaled by (mean / length) ** 0.5 / 1 11.62 / 10.96; a tool
# event's added words at 0.5 / 0 of their weight 12.43 / 9.48; b 0.75 / 1.0 for tool events
# 11.11 / 11.97; tool events at 0.8 / 0.9 / 1.1 of their score 10.03 / 10.50 / 12.18; the
# envelope's field names ("command", "path", "type") never added by the expansion 11.78 (talk-only
# 18.26); a tool event's output counting at 0.25 / 0.5 / 0.75 of its input in the counted
# re-score (BM25F field weights; 11 projects with dev-3, against 9.93) 8.48 / 10.72 / 9.65 (0.5:
# plain Hit@5 mean +0.3, compressed -0.2, fernnote plain -4.1, tallyhub compressed -5.2).  An IDF
# floor (``MIN_SCOPE``) 100-1000 reads well tool-rich (12.52 -> 15.3-17.5, all of it on dev-extra's
# projects of 31-55 memories; dev-3's of 106-118 equal or lower) but loses talk-only compressed
# (pebblepost 9.1 -> 0, tallyhub 25.0 -> 16.7 at every floor from 100): stores that small have
# too thin a vocabulary to say which it is.  Read again on b27b679 (neighbours among talk; mean
# gain over BM25 across the 11 projects): floor 100, tool-rich plain Hit@5 +4.48 -> +6.09, MRR
# +0.030 -> +0.034, compressed +10.14 -> +11.04, +0.081 -> +0.099 (only orbitcal, pebblepost and
# quillstack move); talk-only plain Hit@5 equal (MRR +0.054 both), compressed +9.34 -> +9.25
# (tallyhub 16.7 -> 8.4, sonoview, rackhouse, marketday +2.7 to +3.1), MRR +0.123 -> +0.135; the
# leave-one-out reads talk-only are no better than keeping it off (+4.9 / +9.3): not on.  The
# tool events just after a prompt (the work it asked for) gaining a share of its score when they
# hold a query word themselves, offsets +1..+3 at 0.15 / 0.25, +1..+5 at 0.1 / 0.25, +1..+2 at
# 0.35: plain Hit@5 +4.48 -> +5.55 / +5.26 / +4.16 / +5.82 / +5.10, compressed +10.14 -> +10.25 /
# +9.95 / +10.72 / +9.10 / +9.45, MRR a little up; per project uneven (3 x 0.15: quillstack plain
# -4.5, tallyhub compressed -5.2, marketday plain -2.0) and its leave-one-out compressed read
# (+9.1) below keeping it off: not kept.  In the counted re-score, a query word a tool event holds
# only in the project's checkout path (its key: "/dev/shm/…/repos/sonoview" holds "dev") counting
# for nothing there nor for coverage: tool-rich plain Hit@5 +4.48 -> +4.96 (MRR +0.030 -> +0.027),
# compressed +10.14 -> +10.37, talk-only equal; pebblepost plain +7.2, quillstack compressed
# +4.6, sonoview -1.9 / -2.0 (below BM25 plain): not kept.
# A question for something observed — a count, a size, a duration, an exact version ("how many
# vendors does the seed create?", "which Packer release is installed?") — is answered by what a
# command printed or a file read showed, not by the talk around it that shares its words ("the
# vendors get a page each").  Then a tool event with an output, other than a file written or
# edited, is worth this much more (0: off).  The question's form decides, never a project's
# vocabulary.  Not on: bench/coding_ablate.py --part dev-3 at 0.5, tool-output-only MRR 0.325 ->
# 0.400 (BM25 0.431), Hit@5 equal (65.2 against 69.6), but stack, file-role and multi-session
# lost a question each (all Hit@5 77.4 -> 76.4, MRR 0.605 -> 0.609); --part tunable --lopo
# (11 projects, mean Hit@5 / MRR gain over plain BM25, plain | compressed): off +5.76 / +0.038 |
# +10.46 / +0.090, 0.25 +5.76 / +0.039 | +10.64 / +0.088, 0.5 +5.40 / +0.039 | +10.17 / +0.088,
# 1.0 +5.18 / +0.040 | +10.07 / +0.089 (0.5: fernnote plain -4.1, orbitcal compressed -5.2); the
# leave-one-out choice among off, 0.25 and 1.0 took 0.25 or 1.0 for 5 of 11 projects and read
# below off (plain +4.9, compressed +9.6).  LoCoMo has no tool events: unchanged.  Only where "output holds a query word": a
# count's or a version's output is the bare value, its words are in the command (dev-3 tool-output
# Hit@5 65.2 -> 60.9).  Stack questions ask for versions too ("which Java version does CI use?").
# On since stop 30, when dev-8 (never tuned on) agreed: bench/coding_ablate.py --part tunable,
# 0.5 against off on main dfd197b (Hit@5 / MRR, plain BM25 beside), tool-rich dev-8 77.7 / 0.620
# -> 78.8 / 0.634 (77.2 / 0.591), tool-output-only 54.2 -> 62.5; dev-7 84.8 -> 86.0, dev-5 83.9
# -> 86.5, dev-4 86.6 -> 87.1 (newest-first 75.0 -> 78.1), dev MRR 0.679 -> 0.684; dev-3 81.4 ->
# 80.9 (MRR 0.633 -> 0.640), dev-6 79.8 -> 79.3, newest-first 78.3 -> 73.9 (pw-122 1 -> 6: "how
# long does a resident have to accept an offer?" asks a configured duration, and a run's output
# came first).  A talk-only store has no tool events: unchanged; so is LoCoMo.  Held out (the
# lead's end read, dfd197b -> 089f04d, bench/coding_recall.py, BM25 beside): dev-9 Hit@5 79.7 ->
# 82.0 (79.7), newest-first 54.2 -> 58.3 (37.5); heldout 83.7 -> 85.5 (80.8); heldout-2 82.6 ->
# 83.3 (81.9); heldout-3 80.9 -> 81.3 (76.2); heldout-4 85.8 -> 85.3 (81.7), newest-first 64 -> 60.
OBSERVED_BONUS = 0.5
_ASKS_OBSERVED = re.compile(
    r"\b(?:how\s+(?:many|much|big|large|long|fast|slow|old)|exact(?:ly)?|versions?|releases?)\b",
    re.IGNORECASE)
# Newer is worth up to this much more: the candidates' times ranked, oldest 0 … newest 1
# (a later session's memory of a choice supersedes an earlier one's).
RECENCY_BONUS = 0.0
# A memory inherits this share of the score of a session neighbour at that distance (a
# question and the turns that answer it), among the kinds ``NEIGHBOUR_SKIP`` leaves in.
# Among every kind, on coding sessions its gain was uneven (bench/coding_ablate.py --part tunable --by-project,
# uncompressed, Hit@5 with it minus without): +4.2 +2.2 +7.7 -5.2 +7.2 -4.5 +5.2 over the 7
# tunable projects.  On LoCoMo it is most of the gain (both halves).  Variants tried and not
# kept: half the shares, ±1 only, only the memories before a match, lending from the best 5 or
# 10, a gain capped at the memory's own score.
NEIGHBOUR_OFFSETS: tuple[tuple[int, float], ...] = ((-1, 0.35), (1, 0.35), (-2, 0.25), (2, 0.25))
# How every interface marks a hit that came only as a neighbour.
NEIGHBOUR_NOTE = "session neighbour of a match; holds no query word"
NEIGHBOURS_OF = 20  # the best this many candidates lend to their neighbours (more: no gain)
# Memory kinds that are nobody's session neighbour: they neither lend nor gain.  The bonus
# models a question and the turn that answers it (LoCoMo's turns, a prompt and the assistant's
# answer).  A tool event's neighbours are the other commands and edits of a busy stretch, and a
# worker's digest (summary) is no event of its session, though by time it sits next to the last
# ones.  On the 7 tunable coding projects (bench/coding_ablate.py --part tunable --lopo), Hit@5
# over plain BM25 per project, neighbours among all kinds -> among these only:
#   uncompressed  +11.5 +6.3 0 -7.1 -1.1 -4.5 +10.5 (mean +2.2, 3 below BM25)
#              -> 0 +8.4 0 0 -2.2 0 +10.5 (mean +2.4, 1 below); MRR mean -0.001 -> +0.001
#   compressed    +11.5 +8.3 -5.3 +7.1 +13.2 -4.5 +15.8 (mean +6.6, 2 below)
#              -> +3.8 +7.3 -10.5 +7.1 +11.0 0 +21.1 (mean +5.7, 1 below)
# (ferrydock's 3 questions carry the bonus among all kinds: with it left out, the leave-one-out
# choice drops that form).  Without the neighbour bonus at all: uncompressed 0 +7.3 0 0 -2.2 0
# +5.3, compressed +3.8 +7.3 -10.5 +7.1 +9.9 0 +15.8; and LoCoMo's held-out halves fall below
# plain BM25 (cat1 convs 5-9 27.2 vs 29.1), where every memory is a turn and nothing changes.
# Summaries alone kept out measured mixed (compressed MRR +0.067 -> +0.079, Hit@5 +6.6 ->
# +6.4); tool events alone kept out, worse (compressed orbitcal -15.8).
NEIGHBOUR_SKIP: tuple[str, ...] = ("tool_event", *vocab.SUMMARY_KINDS)
# … and are counted among the other kinds only: the answer to a prompt is the next answer of its
# session, whatever tool calls came between (counted over every kind, a prompt's neighbours in
# a store with tool events were mostly its own tool calls, which neither lend nor gain, so the
# bonus that carries most of the talk-only gain did little where tool events are kept).
# bench/coding_ablate.py --part tunable --lopo (11 projects with dev-3), mean gain over plain
# BM25, tool-rich: plain Hit@5 +4.95 -> +4.20, MRR +0.010 -> +0.022; compressed Hit@5 +7.41 ->
# +9.26, MRR +0.065 -> +0.073 (projects below BM25 in Hit@5: 2 -> 0); the four dev-3 projects
# equal or higher in every cell; lower: pebblepost plain -7.2, orbitcal and tallyhub plain -5.2,
# ferrydock and quillstack compressed -3.9 / -4.6 (one question each).  --talk-only and LoCoMo
# --split: identical (nothing sits between two turns there).
NEIGHBOURS_AMONG_TALK = True
# A question asking for an observed value (how many / big / long, exact, version, release:
# ``_ASKS_OBSERVED``) has its answer in a tool event's output, whose words are mostly not the
# question's: then tool events gain from a matching talk neighbour (they still lend nothing, so
# the talk leaders are the same).  bench/coding_recall.py, tool-output-only Hit@5 / all answerable
# Hit@5, off -> on, plain | compressed: dev-3 65.2 -> 69.6 / 77.4 -> 77.9 | 60.9 -> 69.6 /
# 77.4 -> 78.4; dev 63.6 -> 72.7 / 89.3 -> 90.4 | 72.7 -> 77.3 / 89.3 -> 89.8; dev-extra
# 60.0 -> 60.0 / 87.0 -> 86.0 (one question) in both; newest-first unchanged in every cell;
# --talk-only and LoCoMo hold no tool events (unchanged).  Lending too measured worse (dev-3
# newest-first 75.9 -> 72.4).  bench/coding_ablate.py --part tunable --by-project (11 projects,
# --set TOOL_NEIGHBOURS_GAIN=0 against on), mean gain over BM25 Hit@5 / MRR: plain +5.8 / +0.040
# -> +5.7 / +0.045, compressed +10.7 / +0.093 -> +10.7 / +0.097; newest-first equal in all 11;
# up: ledgerline, pulseboard, sonoview; down one question: orbitcal (plain 73.7 -> 68.4, under
# BM25's 73.7; compressed 78.9 -> 73.7).  Not read with --lopo.  Off: a project falls under BM25
# with it and dev-3's knowledge-update MRR fell (0.693 -> 0.662), so it fails the keep rule
# (holds on every tunable project); kept as a switch for the next reading.
TOOL_NEIGHBOURS_GAIN = False
# A question for a measured or installed value (how many / much / big / long …, exact, what is
# installed: ``_ASKS_MEASURED``) is answered by what a command printed or a file read showed;
# where the store keeps tool events (among the candidates), the talk around that run is no
# answer of it, though it shares the question's words: there the neighbour gain is kept at
# this share (0: none).  A prompt and its answer lend each other their scores, so the talk of
# the session that ran the command took the page from the run itself ("how many migration
# files were there when we switched schema tools?": the prompt asking for the switch, its
# answer and the answer after, above the `atlas migrate import` that printed "7 migration
# files").  A talk-only store has no tool output to answer from: unchanged.
# bench/coding_recall.py, tool-rich and --compress, off -> on (Hit@5, MRR): dev 89.3 -> 90.4,
# 0.662 -> 0.663 (compressed MRR 0.676 -> 0.677); dev-extra MRR 0.705 -> 0.712 (0.665 ->
# 0.670); dev-3 MRR 0.611 -> 0.615 (compressed Hit@5 79.4 -> 79.9); dev-4 84.2 -> 85.1, 0.613
# -> 0.618 (compressed 82.2 -> 83.7, 0.610 -> 0.612); newest-first equal in every cell;
# --talk-only identical.  bench/coding_ablate.py --part tunable --lopo (15 projects, mean gain
# over plain BM25 Hit@5 / MRR): plain +6.13 / +0.0441 -> +6.53 / +0.0488, compressed +10.83 /
# +0.0976 -> +11.36 / +0.0996, chosen for all 15, no project's Hit@5 or plain MRR lower.  With
# ``_ASKS_OBSERVED`` as the gate (any question naming a version or a release: "which Ruby
# version does the app run on?" is answered in talk as often) the same read was +6.53 / +0.0459
# and +11.49 / +0.0958, MRR lower in four tunable cells.  Half the gain kept (0.5): +6.19 /
# +0.0443, +11.36 / +0.0966.
# A count or a total asked for ("what is the word count once the appendices are left out?",
# "what did November's total shares come to?") is such a value too, unless the question asks
# why: there the word names a topic ("why aren't the auditor's totals emailed?", "what made us
# change the kind of count model?": mc-062 2 -> 3 with the gate).  The why-test on the whole
# gate measured worse (dev-7 --compress sp-061 "why is there a limit on how many shifts…" 3 -> 6).
# bench/coding_ablate.py --part tunable, Hit@5 / MRR / tool-output-only Hit@5, without -> with: dev-8 76.6 / 0.620 / 45.8 -> 77.7 / 0.620 / 54.2
# (BM25 77.2 / 0.591 / 54.2; qw-142, sx-143), dev-6 MRR 0.616 -> 0.618, dev-4 0.649 -> 0.650,
# the other five parts identical; --compress dev-8 76.1 / 0.619 -> 76.6 / 0.622 (BM25 68.5),
# the other seven identical; --talk-only identical (no tool events: the gate never applies).
OBSERVED_NEIGHBOURS = 0.0
_ASKS_MEASURED = re.compile(
    r"\b(?:how\s+(?:many|much|big|large|long|fast|slow|old)|exact(?:ly)?|installed)\b",
    re.IGNORECASE)
_ASKS_COUNT = re.compile(r"\b(?:counts?|totals?)\b", re.IGNORECASE)
# Tried on ce02585 and not kept: tool events let into the bonus (lend and gain) only when the
# question asks for what a run showed ("printed", "output", "returned", "failed with",
# "reported", "how many"; with "show", "error", "version" it caught stack and knowledge-update
# questions too).  bench/coding_recall.py --part dev-3, plain: tool-output-only Hit@5 65.2 ->
# 65.2 (BM25 69.6), MRR 0.325 -> 0.366 (BM25 0.431); all answerable Hit@5 77.4 -> 76.9;
# newest-first 75.9 -> 72.4 (compressed 72.4 -> 69.0, tool-output Hit@5 60.9 -> 60.9).
# A memory made inside a date the query names (or up to DATE_AFTER_DAYS later: things are
# usually recorded after they happen) is worth this much more.
DATE_BONUS = 0.5
DATE_AFTER_DAYS = 8
# Whether worker-written digests (session and project summaries) get the coverage bonus.  A
# summary holds the words of a whole session, so it holds several words of many questions
# without answering them; with the bonus, summaries took top-5 places from the memories that
# answer (coding set, dev part after compression: Hit@5 78.1 with it, 82.4 without).
SUMMARY_COVER = False
# Knowledge updates (``_demote_stale``).  A memory that is the old
# answer — the evidence of a superseded fact the query is about, or older than a change and
# naming the value it replaced — is ranked at this share of its score (unless it is the evidence
# of a current fact the query found) …
STALE_SHARE = 0.7
# … and the evidence of the change (the current end of the chain) just above the old answer's
# best at this share: it answers the same question, even when it holds fewer of its words ("uv"
# vs "manage the dependencies with poetry").  (Adding it when the keywords missed it altogether
# measured worse: dev --compress Hit@5 85.6 -> 84.5.)
SUCCESSOR_SHARE = 1.0
# A superseded fact is about the query when the query words it holds weigh (IDF) at least this
# share of the best-matching fact's: "Run with `npm run dev`" holds only "run" of "what runs the
# unit tests".  (0.3-0.4 equal on the tunable parts; 0.6 and up lost dev newest-first 92.9 -> 85.7.)
STALE_MATCH = 0.4
# The values change statements dropped (the extractor's ``replaced:<value>`` records): memories
# older than the change that name the value are its old answer too, whether or not a fact was
# read from them (the settings edit that set HS256, the prompt that chose Jest).  Off, compressed
# newest-first dev 92.9 -> 71.4, dev-extra 93.3 -> 66.7 (bench/coding_ablate.py --compress).
REPLACED_VALUES = True
# … and the values the best candidates the worker has not read yet (a prompt, an answer) say
# they replaced, read at query time as the worker reads them ("from HS256 to RS256", "Jest is
# gone"): the same before the worker ran.  Off, uncompressed newest-first dev 64.3 -> 50.0,
# dev-extra 86.7 -> 73.3 (--talk-only: 84.6 -> 69.2, 100 -> 75.0), Hit@5 equal or lower.
# Costs ~1 ms a query uncompressed (~3 ms with talk only: every candidate is a prompt or an
# answer), nothing once the worker has read the candidates.
STATED_CHANGES = True
# … and the slots the best candidates show holding a value (``aletheia.claims``: a runtime's
# version a command printed or a version file was given, a setting's value in a file or an edit):
# of two candidates showing one slot with different values, the older is the old answer, however
# either words it.
SLOT_CLAIMS = True
# … and the values the best answers state that a later edit replaced at a key they name next to
# the value ("the default window is 4096 samples", then `windowSize = 4096` → `8192`:
# ``aletheia.followed``): the edit is brought in, though it holds no query word, and ranked as
# the change.  Off, dev-3 newest-first 62.1 -> 55.2 (bench/coding_recall.py --part dev-3).
EDITED_VALUES = True
# … and a setting a Write or Edit left that a later Edit of the file changed again (``_set_again``).
SET_AGAIN = True
# … and a value the best prompts and answers state that their own session's edit set and a later
# edit changed again (``_session_set``).
SESSION_SET = True
# … and, for a question that asks for a measure (how long, how often, at what time, how much:
# ``aletheia.measures``), the newest measure of that kind the best prompts and answers say in a
# sentence naming the query's subject, over the older ones saying another ("a 10 second timeout"
# then "fail fast: 3 second timeout"; "once a day" then "every 12 hours"): a change of a measure
# rarely names the old one in a change statement's form.  (A later prompt or answer saying any
# change of the query's subject — "moved", "switched to", "raised", "now uses" — over the older
# candidates above it, with no value named, was tried and dropped: it fired on ~30 % of all
# questions and lost more than it won, dev-3 MRR 0.603 -> 0.585, talk-only Hit@5 85.8 -> 84.4.)
# When no candidate changed it, a later prompt or answer naming the best answer's old measure
# and another with a change's words is brought in ("once a day is too coarse … make the check
# twice a day": no word of the query).  On against off: dev-3 newest-first 72.4 -> 75.9,
# --talk-only 66.7 -> 80.0, --compress 69.0 -> 72.4, both 73.3 -> 86.7; dev, dev-extra and
# LoCoMo --split identical; bench/coding_ablate.py --part tunable --lopo, mean gain over plain
# BM25 of the 11 projects, Hit@5 / MRR: tool-rich +5.57 / +0.0384 -> +5.76 / +0.0402 (compressed
# +10.56 -> +10.75), talk-only +4.95 / +0.0587 -> +5.19 / +0.0634 (compressed +11.36 -> +11.89),
# chosen for all 11 in both.  Noise it is gated against: the new measure must be said with a
# change's words (``measures.CHANGE_CUE``) and, for a period, within a factor of what the best
# older answer says ("for 20 s" of a load test is no session length of "every week").
MEASURES = True
# … and, for a period, the later edits that replace the newest saying's value spelled in code with
# its unit (`--delete-older-than 30d` after "keeps generations for a month", then `30d` → `21d`):
# a value changed twice whose last step is only in a diff (``_measure_edited``).  On against off
# (bench/coding_recall.py): dev-5 newest-first 80.0 -> 84.0 (hx-125, 3 -> 1; --compress 4 -> 1),
# MRR 0.638 -> 0.642; every other tunable part, --talk-only and --compress identical.
EDITED_MEASURES = True
# … and a dependency the best candidates name that a later edit of a manifest swapped for another
# (`{:timex, …}` → `{:tz, …}`, `libs.glide.compose` → `libs.coil.compose`: ``_swapped_later``):
# the edit goes just above the best of them, a lift only (they may answer other things too).  On
# against off (bench/coding_recall.py, tool-rich / --compress): dev-3 newest-first 82.8 -> 86.2 /
# 79.3 -> 82.8 (fn-122 9 -> 1), Hit@5 79.4 -> 79.9 / 79.9 -> 80.4; dev ll-040 4 -> 5 (a black ->
# ruff swap lifted above a prompt naming black), ll-022 7 -> 8 compressed; the rest identical,
# --talk-only identical.
SWAPPED_NAMES = True
# … and of a command run twice among the best candidates with another output the second time, the
# newer goes just above the older (``_rerun_later``: `eas build:version:get` printed versionCode
# 14, months later 22), unless either failed, the older printed query words the newer did not
# (the lint finding a question quotes, then "0 issues"), or the question asks about an earlier
# state ("before", "first", "originally", "was").  On against off (bench/coding_recall.py,
# tool-rich / --compress): dev-5 Hit@5 83.9 -> 84.5 / 84.5 -> 85.0 (fp-140 18 -> 3 / none -> 3),
# dev ll-164 2 -> 1, dev-extra fd-020 8 -> 9 / 7 -> 8; the rest and --talk-only identical.
# (Without the query-word check: dev-4 cy-084 1 -> 2, dev-5 lw-042 3 -> 4, lw-144 8 -> 10.)
# Removed in stop 30 (idle on dev-3 … dev-8) and put back: on dev-9, written after it and never
# tuned on, removing it cost newest-first 58.3 -> 50.0 and --compress 54.2 -> 45.8 (BM25 37.5 /
# 41.7), Hit@5 82.0 -> 81.4.
RERUN_LATER = True
# … and of two of the best prompts and answers, the later goes just above the older when it says
# every query word the older holds (at least two: the same subject) in one sentence with a
# change's words: "The lockout is now one SQL statement: a wrong code … flips the compartment"
# after "locks a compartment for 15 minutes after 5 wrong tries".  The older one, said in full
# words, holds the query's words as often or more (the coverage bonus lifts it), and a terse
# change names no old value for the other readings to follow.  Only a lift, no stale mark.
# On against off (bench/coding_recall.py, tool-rich / --talk-only / --compress / both): dev-4
# newest-first 46.9 -> 56.2 / 52.9 -> 70.6 / 53.1 -> 59.4 / 58.8 -> 70.6, MRR 0.613 -> 0.621 /
# 0.683 -> 0.689 / 0.610 -> 0.617 / 0.699 -> 0.703; dev-3 MRR +0.004 to +0.005, dev +0.000 to
# +0.006, dev-extra identical; Hit@5 and newest-first equal in every other cell.  LoCoMo --split
# identical.  (A later talk saying any change of the subject, unchecked against the older one's
# words, was tried in stop 26 and lost more than it won: above, ``MEASURES``.)
SAID_SINCE = True
# … and when the query names a runtime or a tool beside a version word ("Which Elixir release…",
# "Which Node version…": ``_names_version_of``) and two of the best candidates show that slot with
# different values (``SLOT_CLAIMS``), the newest showing it goes first, not only above the old
# one: it is the answer, however few of the query's words it holds ("release" matches every
# `mix release` of a deploy, while `elixir --version`'s output says "Elixir 1.17.3").
# On against off (bench/coding_recall.py, tool-rich / --talk-only / --compress / both): dev-4
# Hit@5 85.1 -> 85.6 / equal / 83.7 -> 84.2 / equal, newest-first 65.6 -> 68.8 / equal /
# 68.8 -> 71.9 / equal; dev-extra Hit@5 89.0 -> 90.0 / equal / 89.0 -> 90.0 / equal, MRR 0.712 ->
# 0.715 / 0.826 -> 0.834 / 0.670 -> 0.685 / 0.768 -> 0.790; dev MRR 0.716 -> 0.721 (talk-only,
# both); dev-3 identical.  Every question it moved went up.  (Read as "names the runtime and asks
# a version", it put Go's own version first for "Which version of the Go linter runner…": two
# tool-output questions fell out of dev-4's top 5.)
SLOT_FIRST = True
# … where what the older says of the subject is its sentence holding the most query words (at
# least two), not every query word anywhere in it: "Passes are now written … (AsyncStorage …)"
# also says "the QR library ships untranspiled modules", and the later "The pass cache is now on
# a synchronous native store (MMKV …)" need not say "library" too.  On against off
# (bench/coding_recall.py, tool-rich / --talk-only / --compress): dev-5 newest-first 76.0 -> 80.0
# / 90.9 -> 100 / 72.0 -> 80.0 (fp-120, hx-126), MRR 0.633 -> 0.638; dev-3, dev-extra identical;
# Hit@5 equal everywhere; four answers one place lower (later talk holding the subject with
# "raised"/"bumps" of another thing: dev ll-047 3 -> 4, dev-4 cn-002 3 -> 4, cn-161 2 -> 3, cy-101
# 3 -> 4), dev MRR 0.666 -> 0.665, dev-4 0.646 -> 0.644.
SAID_SINCE_SENTENCE = True
SAID_SINCE_READ = 10  # the best candidates read for it
SAID_SINCE_WORDS = 2  # query words the older must hold (one word is no subject)
# … and a revert (A → B → A): of two of the best prompts and answers, the later goes just above
# the older when it says the project went back to a state ("Back to one static file", "reverted to
# the sync client", "went back to cron") that the older said it had left ("It isn't a single static
# file any more", "no longer on cron"): the older describes B, the state in between, in the words
# of the question as often as the later (``_reverted``).  Only a lift, no stale mark.  Removed in
# stop 30 (idle on dev-7 and dev-8) and put back: on held-out heldout-4 --talk-only, removing it
# cost newest-first 47.1 -> 41.2 (BM25 58.8), as on dev-6 where it was fitted (82.6 -> 78.3).
REVERTED = True
_REVERT = re.compile(r"\b(?:(?:went|go(?:es|ing)?|gone|get(?:s|ting)?(?: \w+)?|got(?: \w+)?|mov(?:e|ed|es|ing)|"
                     r"switch(?:ed|es|ing)?|chang(?:e|ed|es|ing)|revert(?:ed|s|ing)?|roll(?:ed|s|ing)?|"
                     r"put(?: \w+)?|it'?s|we'?re|is|are) back to|reverted to|back to)\s+(?P<to>[^.;:,!?()]{3,60})", re.I)
# What the older says of the state it left: the state's words with a word of leaving in one sentence.
_LEFT = re.compile(r"\b(?:any ?more|no longer|isn'?t|aren'?t|wasn'?t|not|without|lost|los(?:e|es|ing)|"
                   r"instead of|dropp(?:ed|ing)|gave up|giving up|away from|off)\b", re.I)
_COUNTING = frozenset("one single just only".split())  # ("back to one static file" left "a single static file")
# (not for a question why: it asks about the time a choice was made, whose words answer it)
_ASKS_WHY = re.compile(r"\b(?:why|reason|made us|led us)", re.I)
_SAID_ANEW = re.compile(r"\b(?:now|instead|no longer|any ?more|chang\w*|switch\w*|moved|mov(?:e|es|ing) (?:to|over|off|away)|"
                        r"replac\w*|rais\w*|lower\w*|increas\w*|decreas\w*|reduc\w*|bump\w*)\b", re.I)
# Only when the change scores at least this share of the old answer for the query: far below,
# the question is about the old state itself (an error of that time, why it was dropped).
# Ungated, a change statement took first place from the answer of 20 error-fix and stack
# questions (dev --compress MRR 0.649 -> 0.612); 0.2 lost dev Hit@5 (-1.0), 0.5 newest-first.
CHANGE_NEAR = 0.35
# Facts' scores on the memories' scale are multiplied by this before the merge (0: no facts).
FACT_SHARE = 1.0
# Facts' length normalisation (against the facts found): a fact is one statement, and the one
# that holds more of the query is the longer ("`mypy src` failed with … stubs … fix: pip
# install types-PyYAML" against "Dependency: `types-PyYAML`"); at the memories' 0.9 the
# shorter won.  0.5, as before; the coding set reads the same either way (LOPO merit +6.9
# at 0.5, +6.8 at 0.9).
FACT_B = 0.5

_STOP_TEXT = """a about above after again against all am an and any are aren as at be because been before
    being below between both but by can cannot could did didn do does doesn doing don down during
    each few for from further had has have having he her here hers herself him himself his how i
    if in into is isn it its itself just let me more most my myself no nor not of off on once only
    or other ought our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up very was
    we were what when where which while who whom why will with would you your yours yourself
    yourselves s t ll ve re d m o y ain also us got get"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_TOKENIZE = "porter unicode61 remove_diacritics 2"


@dataclass
class SearchQuery:
    q: str
    project: str | None = None
    scope: str | None = None
    kind: str | None = None
    tool: str | None = None
    session_id: str | None = None
    since: int | None = None
    until: int | None = None
    pinned: bool | None = None
    include_dismissed: bool = False
    include_facts: bool = True
    limit: int = 10
    # None: on when the semantic extra is installed and has vectors; False: keyword only.
    semantic: bool | None = None


@dataclass
class Hit:
    id: str
    type: str  # "memory" or "fact"
    score: float
    title: str
    kind: str
    project: str
    created_at: int
    snippet: str = ""
    session_id: str | None = None
    source_ids: list[str] = field(default_factory=list)
    # Which lists found it: "keyword", "fact", "semantic", "neighbour".
    via: list[str] = field(default_factory=list)
    # Where the snippet holds a query word: [start, end) in code points.  Positions, not
    # markers in the text: stored text has brackets of its own ("[tool.ruff]", "[redacted]").
    marks: list[list[int]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["created"] = ids.iso(self.created_at)
        return out

    def matched(self) -> list[str]:
        """The words the snippet marks, lower-cased, each once, in order."""
        return list(dict.fromkeys(self.snippet[s:e].lower() for s, e in self.marks))


@dataclass
class Shaped:
    """The query as the index sees it: stems, rarest first, and the common ones set aside."""

    terms: list[str]
    common: list[str]
    doc_freq: dict[str, int]
    scope_size: int
    surface: dict[str, str] = field(default_factory=dict)  # stem → the word the user typed
    windows: list[tuple[int, int]] = field(default_factory=list)  # dates the query names
    # Project-scoped: the rowids in scope holding each kept stem (newest first, within budget).
    postings: dict[str, list[int]] = field(default_factory=dict)
    cut: bool = False  # one word over the budget: only its newest postings are ranked
    # Added words (``EXPAND_WEIGHT``): key ("~" + the query stem it stands for; its postings
    # are in ``postings``) → (that query stem, its weight).
    expansions: dict[str, tuple[str, float]] = field(default_factory=dict)

    def weighted(self) -> list[tuple[str, float, str]]:
        """(key, weight, group) of every word ranked: the query's own (weight 1, each its own
        group) and the added ones (in the group of the query word they stand for)."""
        return [*((t, 1.0, t) for t in self.terms),
                *((t, w, g) for t, (g, w) in self.expansions.items())]


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def content_words(text: str) -> list[str]:
    """Words worth searching for: stop words out, and the parts of a CamelCase name and the
    joined form of a snake_case one added (the index holds both: ``aletheia.idents``)."""
    seen: dict[str, None] = {}
    for w in [*words(text), *identifier_words(text)]:
        w = w.replace("’", "'")
        if "'" in w:
            w = w.split("'", 1)[0]
        if w and w not in STOP_WORDS and w not in seen:
            seen[w] = None
    return list(seen)


_PREFIXED = re.compile(r"([^\W_]+)\*")
MIN_PREFIX = 2  # letters a prefix query needs (``de*`` is allowed, ``d*`` is not)
# A word no memory in scope holds, typed with at least this many letters, is searched as a
# prefix (``deplo`` finds deploy, deployed, deployment; an ``AKIA`` key id its key).
AUTO_PREFIX = 3


def _prefix_term(stem: str, typed: str) -> str | None:
    """The prefix query for a word: what its stem and its typed form share ("deploy" stems to
    "deploi": the prefix "deplo*" finds both forms)."""
    head = os.path.commonprefix([stem, typed])
    return head + "*" if len(head) >= MIN_PREFIX else None


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" \
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_ORD = r"(\d{1,2})(?:st|nd|rd|th)?"
_DATE_PATTERNS = (
    ("day", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    ("dmy", re.compile(rf"\b{_ORD}\s+(?:of\s+)?{_MONTH}\.?,?\s+(\d{{4}})\b", re.I)),
    ("mdy", re.compile(rf"\b{_MONTH}\.?\s+{_ORD},?\s+(\d{{4}})\b", re.I)),
    ("my", re.compile(rf"\b{_MONTH}\.?,?\s+(\d{{4}})\b", re.I)),
    ("y", re.compile(r"\b((?:19|20)\d{2})\b")),
)


def _month(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(name.lower()[:3]))


def date_windows(text: str) -> list[tuple[int, int]]:
    """Time windows (epoch ms, UTC) for the dates a query names: a day, a month or a year."""
    from datetime import datetime, timedelta

    out: list[tuple[int, int]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            try:
                if kind == "day":
                    y, mo, d = int(m[1]), int(m[2]), int(m[3])
                elif kind == "dmy":
                    y, mo, d = int(m[3]), _month(m[2]), int(m[1])
                elif kind == "mdy":
                    y, mo, d = int(m[3]), _month(m[1]), int(m[2])
                elif kind == "my":
                    y, mo, d = int(m[2]), _month(m[1]), 0
                else:
                    y, mo, d = int(m[1]), 0, 0
                if d:
                    start = datetime(y, mo, d, tzinfo=UTC)
                    end = start + timedelta(days=1)
                elif mo:
                    start = datetime(y, mo, 1, tzinfo=UTC)
                    # the first of the next month (calendar costs the CLI ~2 ms to import)
                    end = datetime(y + mo // 12, mo % 12 + 1, 1, tzinfo=UTC)
                else:
                    start = datetime(y, 1, 1, tzinfo=UTC)
                    end = datetime(y + 1, 1, 1, tzinfo=UTC)
            except (ValueError, StopIteration, OverflowError):
                continue
            taken.append((m.start(), m.end()))
            end += timedelta(days=DATE_AFTER_DAYS)
            out.append((int(start.timestamp() * 1000), int(end.timestamp() * 1000)))
    return out


def _fts_term(word: str) -> str:
    """An index token as a MATCH term.  FTS5 runs the tokenizer over a MATCH string, so a stem
    is stemmed again, and the porter stemmer is not idempotent ("database" → "databas" →
    "databa", "releases" → "releas" → "relea", "uses" → "us" → "u"): a word that tokenizes
    to it stands in for it (``MATCH_TYPED``), so the index is asked for the token it holds."""
    if word.endswith("*"):  # a prefix query
        return '"' + word[:-1].replace('"', '""') + '"*'
    if MATCH_TYPED:
        word = _TYPED.get(word, word)
    return '"' + word.replace('"', '""') + '"'


def _scope_match(query: SearchQuery) -> str:
    """The FTS5 clause that cuts a project-scoped query to the project's postings (and the
    promoted ones) inside the index; see schema migration 4.  The SQL filters still decide."""
    if not query.project:
        return ""
    own = schema.scope_token(query.project)
    if query.scope == "project":
        return f' AND fts_scope : "{own}"'
    if query.scope == "global":
        return ' AND fts_scope : "zglobal"'
    return f' AND fts_scope : ("{own}" OR "zglobal")'


def _terms_match(terms: Sequence[str], query: SearchQuery) -> str:
    """``(t1 OR t2 …)`` for the memory index, cut to the query's project."""
    return "(" + " OR ".join(_fts_term(t) for t in terms) + ")" + _scope_match(query)


# --- per-connection helpers (temp tables: nothing is written to hub.db) ---------------------

_HELPERS = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.aletheia_q USING fts5(t, tokenize='{_TOKENIZE}')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.aletheia_q_terms "
    "USING fts5vocab(temp, aletheia_q, instance)",
)


def _ensure_helpers(conn: sqlite3.Connection) -> None:
    # Temp tables live per connection; IF NOT EXISTS makes this a cheap no-op after the first.
    for sql in _HELPERS:
        conn.execute(sql)


# Tokens per word, kept for the process: the tokenizer is fixed, and the temp table's three
# statements cost a query ~0.1 ms (a server or an MCP process asks for the same words again).
_STEMS: dict[str, tuple[str, ...]] = {}
STEMS_KEPT = 20_000
# … and, for a token that is not its word, a word that tokenizes to it alone (``_fts_term``).
_TYPED: dict[str, str] = {}


def stems(conn: sqlite3.Connection, items: Sequence[str]) -> list[list[str]]:
    """The index's own tokens for each item (FTS5 porter stems), via a temp FTS5 table."""
    known = {w: _STEMS[w] for w in items if w in _STEMS}
    missing = [w for w in dict.fromkeys(items) if w not in known]
    if missing:
        _ensure_helpers(conn)
        conn.execute("DELETE FROM temp.aletheia_q")
        conn.executemany(
            "INSERT INTO temp.aletheia_q(rowid, t) VALUES (?, ?)",
            [(i + 1, w) for i, w in enumerate(missing)],
        )
        found: list[list[str]] = [[] for _ in missing]
        for term, doc, _offset in conn.execute(
            "SELECT term, doc, offset FROM temp.aletheia_q_terms ORDER BY doc, offset"
        ):
            found[int(doc) - 1].append(str(term))
        known.update(_keep_stems(missing, found))
    return [list(known[w]) for w in items]


def _keep_stems(missing: list[str], found: Sequence[Sequence[str]]) -> dict[str, tuple[str, ...]]:
    if len(_STEMS) + len(missing) > STEMS_KEPT:
        _STEMS.clear()
        _TYPED.clear()  # (together: a word kept in one and not the other is asked wrongly)
    kept = {}
    for w, toks in zip(missing, found, strict=True):
        kept[w] = _STEMS[w] = tuple(toks)
        if len(toks) == 1 and toks[0] != w:
            _TYPED.setdefault(toks[0], w)
    return kept


def _fixed_stems(conn: sqlite3.Connection, items: list[str]) -> list[list[str]]:
    """``stems(conn, items)`` for a fixed list (the concept map's keys), read from a file in
    ``$ALETHEIA_HOME/cache/`` that the first process wrote: stemming the ~220 keys is ~4 ms of
    each hook process's first search.  The file is keyed by the SQLite build, the tokenizer and
    the exact items, and kept as ``stems`` keeps what it reads (``_STEMS``, ``_TYPED``), so
    every ranking is the same; any failure reads them from the index's tokenizer again."""
    import binascii
    import marshal

    from aletheia.paths import home_dir

    crc = binascii.crc32(repr((sqlite3.sqlite_version, _TOKENIZE)).encode())
    for w in items:
        crc = binascii.crc32(w.encode() + b"\0", crc)
    try:
        name = os.path.join(home_dir(), "cache", f"stems-{crc:08x}.bin")
    except Exception:
        return stems(conn, items)
    try:
        with open(name, "rb") as f:
            read = marshal.load(f)
        if (isinstance(read, list) and len(read) == len(items)
                and all(isinstance(t, list) and all(isinstance(x, str) for x in t) for t in read)):
            missing = [w for w in dict.fromkeys(items) if w not in _STEMS]
            found = dict(zip(items, read, strict=True))
            _keep_stems(missing, [found[w] for w in missing])
            return [list(t) for t in read]
    except Exception:  # missing or damaged: stem them again
        pass
    out = stems(conn, items)
    tmp = f"{name}.{os.getpid()}.tmp"
    try:  # (whole under a temporary name, then renamed: a reader never sees half a file)
        os.makedirs(os.path.dirname(name), mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            marshal.dump(out, f)
        os.replace(tmp, name)
        folder = os.path.dirname(name)
        olds = sorted((os.path.join(folder, n) for n in os.listdir(folder)
                       if n.startswith("stems-") and n.endswith(".bin")), key=os.path.getmtime)
        for old in olds[:-4]:  # (the newest few: two versions sharing a data directory keep theirs)
            os.unlink(old)
    except Exception:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return out


# --- filters -------------------------------------------------------------------------------


def _filters(query: SearchQuery, alias: str, *, facts: bool = False) -> tuple[str, list[Any]]:
    """The query's filters as " AND …" (aletheia.filters: the same filters as every list)."""
    dismissed = None if query.include_dismissed else False
    if facts:
        w = filters.facts(filters.Filter(
            project=query.project, scope=query.scope, session_id=query.session_id,
            since=query.since, until=query.until, dismissed=dismissed), alias)
    else:
        w = filters.memories(filters.Filter(
            project=query.project, scope=query.scope, kind=query.kind, tool=query.tool,
            session_id=query.session_id, since=query.since, until=query.until,
            pinned=query.pinned, dismissed=dismissed), alias)
    return w.sql(" AND "), w.params


def _finer(query: SearchQuery) -> bool:
    return any(
        v is not None and v != ""
        for v in (query.kind, query.tool, query.session_id, query.since, query.until, query.pinned)
    )


def _scope_size(conn: sqlite3.Connection, query: SearchQuery) -> int:
    """Live memories the query can see.  Project and scope alone are read from ``memory_count``
    (kept by triggers); finer filters are counted."""
    finer = _finer(query)
    if not finer and not query.include_dismissed:
        w = filters.Where().project(query.project).equal("scope", query.scope)
        row = conn.execute(
            f"SELECT coalesce(sum(n), 0) FROM memory_count{w.sql()}", w.params
        ).fetchone()
        return int(row[0])
    where, params = _filters(query, "m")
    row = conn.execute(f"SELECT count(*) FROM memory m WHERE 1{where}", params).fetchone()
    return int(row[0])


def _global_df(conn: sqlite3.Connection, term: str, cap: int) -> int:
    """Memories holding ``term`` anywhere, counted up to ``cap`` (rowids only: cheap)."""
    row = conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT ?)",
        (_fts_term(term), cap),
    ).fetchone()
    return int(row[0])


def _postings(conn: sqlite3.Connection, query: SearchQuery, terms: Sequence[str],
              cap: int, any_: bool = False) -> list[int]:
    """Rowids of the memories holding every one of ``terms`` (``any_``: any of them) (in the
    query's project when it has one), newest first, at most ``cap``."""
    match = (" OR " if any_ else " AND ").join(_fts_term(t) for t in terms)
    if query.project:
        match = "(" + match + ")" + _scope_match(query)
    # One string for the whole list: a row per posting costs several times more in Python.
    found = conn.execute(
        "SELECT group_concat(rowid) FROM (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? "
        "ORDER BY rowid DESC LIMIT ?)", (match, cap),
    ).fetchone()[0]
    return list(map(int, found.split(","))) if found else []


def shape_query(conn: sqlite3.Connection, query: SearchQuery | str) -> Shaped:
    """Content words → stems; the rarest ``MAX_TERMS`` kept while their postings fit
    ``POSTING_BUDGET`` (the others are set aside: they only mark snippets).  When even the
    rarest word alone is over the budget, only its newest postings are ranked.

    A project-scoped query counts each word's postings in the project (exactly, up to the
    budget), so what it keeps never depends on other projects.  (A rule that set aside words
    found in over 20 % of the scope while a rarer one remained lost 0.3–0.4 points on both
    halves of LoCoMo: IDF already weighs common words down.)"""
    if isinstance(query, str):
        query = SearchQuery(q=query)
    words_ = content_words(query.q)[:MAX_WORDS]
    prefixed = {w.lower() for w in _PREFIXED.findall(query.q)}
    surface: dict[str, str] = {}
    for word, toks in zip(words_, stems(conn, words_), strict=True):
        for tok in toks:
            if word in prefixed:
                tok = _prefix_term(tok, word) or tok
            surface.setdefault(tok, word)
    terms = list(surface)
    scope = _scope_size(conn, query)
    windows = date_windows(query.q) if DATE_BONUS else []
    if not terms or scope == 0:
        # No memories in scope: nothing to measure rarity against (facts may still match).
        return Shaped(terms[:MAX_TERMS], [], {}, scope, surface, windows)
    fetched: dict[str, list[int]] = {}
    if query.project:
        # Per-project statistics: postings counted inside the project, up to the budget (read
        # once: the words kept are ranked from the same lists).
        fetched = {t: _postings(conn, query, [t], POSTING_BUDGET + 1) for t in terms}
        freqs = {t: len(fetched[t]) for t in terms}
    else:
        # Across projects the store is the scope: counts of the whole index, up to the budget.
        freqs = {t: _global_df(conn, t, POSTING_BUDGET + 1) for t in terms}
    for t in list(terms):
        # A word nothing in scope holds may be the start of one (search as you type).
        if freqs[t] == 0 and not t.endswith("*") and len(surface[t]) >= AUTO_PREFIX:
            p = _prefix_term(t, surface[t])
            if p and p not in freqs:
                if query.project:
                    fetched[p] = _postings(conn, query, [p], POSTING_BUDGET + 1)
                    n = len(fetched[p])
                else:
                    n = _global_df(conn, p, POSTING_BUDGET + 1)
                if n:
                    terms[terms.index(t)] = p
                    freqs[p] = n
                    surface[p] = surface.pop(t)
    terms.sort(key=lambda t: (freqs[t], t))
    kept: list[str] = []
    spent = 0
    for t in terms:
        n = freqs[t]
        if len(kept) >= MAX_TERMS:
            break
        if spent == 0 and n > POSTING_BUDGET:
            kept.append(t)  # the rarest word found is over the budget alone (see ``cut``)
            spent = n
            break
        if spent + n <= POSTING_BUDGET:
            kept.append(t)  # (a word no memory holds costs nothing; facts may hold it)
            spent += n
    # Even the rarest word is over the budget: only the newest memories holding it are ranked
    # (its whole list would cost more than the answer is worth) — first those that hold the
    # next rarest words too, when the query has more.
    cut = spent > POSTING_BUDGET
    expansions: dict[str, tuple[str, float]] = {}
    if EXPAND_WEIGHT > 0 and query.project and not cut:
        for source, added in _expansions(conn, set(surface),
                                         _phrases(query.q, surface))[:MAX_EXPANSIONS]:
            # (read only as far as what is left of the budget: a longer list is not taken, and
            # an OR over a concept's thirty names costs ~3 µs a posting)
            left = POSTING_BUDGET - spent
            rows = _postings(conn, query, added, left + 1, any_=True) if left > 0 else []
            if rows and spent + len(rows) <= POSTING_BUDGET:
                key = "~" + source
                fetched[key] = rows
                freqs[key] = len(rows)
                spent += len(rows)
                expansions[key] = (source, EXPAND_WEIGHT)
    postings: dict[str, list[int]] = {}
    if cut:
        together = [t for t in terms if freqs[t] > 0][:CUT_WORDS]
        both = _postings(conn, query, together, CUT_DEPTH) if len(together) > 1 else []
        alone = _postings(conn, query, together[:1], CUT_DEPTH)
        kept = together
        postings = {t: both for t in together}
        postings[together[0]] = list(dict.fromkeys([*both, *alone]))[:CUT_DEPTH]
    elif query.project:
        postings = {t: fetched[t] for t in [*kept, *expansions]}
    common = [t for t in terms if t not in kept]
    return Shaped(kept, common, freqs, scope, surface, windows, postings, cut, expansions)


# The concept map's keys in the index's stems, and the added words of the keys a query named,
# stemmed on first use (the whole map at once costs ~4 ms, too much for a hook's process).
_KEY_STEMS: dict[str, list[tuple[tuple[str, ...], str]]] = {}
# … and where in that list the keys starting with each stem are (a key names a concept only
# when the query holds all its stems: its first is enough to find it, not a walk of the map)
_KEY_FIRST: dict[str, dict[str, list[int]]] = {}
_ADDED_STEMS: dict[tuple[str, str], tuple[str, ...]] = {}


def _phrases(text: str, surface: dict[str, str]) -> dict[str, str]:
    """Each query word followed by a stop word (of two letters or more: "log in", not the "t"
    of "don't"), the two joined ("login") → the word's stem (``EXPAND_PHRASES``)."""
    if not EXPAND_PHRASES:
        return {}
    stem_of = {typed: stem for stem, typed in surface.items()}
    seq = words(text)
    return {a + b: stem_of[a] for a, b in pairwise(seq)
            if a in stem_of and b in STOP_WORDS and len(b) > 1}


def _expansions(conn: sqlite3.Connection, asked: set[str],
                phrases: dict[str, str] | None = None) -> list[tuple[str, list[str]]]:
    """(a query stem, the stems added for it) for the concepts ``asked`` names, in the map's
    order; each added stem once, and none the query holds itself.  ``phrases``: a joined
    phrase → the query stem it starts with (``_phrases``); a key equal to one stands for that
    stem, and the stem's own one-word keys are not read."""
    from aletheia import concepts

    tables = {"concepts": concepts.CONCEPTS,
              **({"synonyms": concepts.SYNONYMS} if EXPAND_SYNONYMS else {})}
    phrases = {k: v for k, v in (phrases or {}).items() if any(k in t for t in tables.values())}
    taken = set(phrases.values())
    named: list[tuple[str, str, str]] = []  # (table, key, the query stem it stands for)
    for name, table in tables.items():
        if name not in _KEY_STEMS or name not in _KEY_FIRST:
            keys = list(table)
            _KEY_STEMS[name] = [(tuple(dict.fromkeys(k)), key)
                                for k, key in zip(_fixed_stems(conn, keys), keys, strict=True) if k]
            first: dict[str, list[int]] = {}
            for i, (k, _) in enumerate(_KEY_STEMS[name]):
                first.setdefault(k[0], []).append(i)
            _KEY_FIRST[name] = first
        entries, first = _KEY_STEMS[name], _KEY_FIRST[name]
        named += [(name, key, k[0]) for k, key in
                  (entries[i] for i in sorted(i for a in asked for i in first.get(a, ())))
                  if all(t in asked for t in k) and not (len(k) == 1 and k[0] in taken)]
        named += [(name, key, phrases[key]) for key in phrases if key in table]
    todo = [(name, key) for name, key, _ in named if (name, key) not in _ADDED_STEMS]
    if todo:
        # (word by word: a word that is its own token is what ``_fts_term`` asks the index through,
        # "supabase" for supabas, which FTS5 would stem again to supaba)
        lists = [tables[n][k].split() for n, k in todo]
        tokens = iter(stems(conn, [w for words_ in lists for w in words_]))
        for (name, key), words_ in zip(todo, lists, strict=True):
            _ADDED_STEMS[name, key] = tuple(dict.fromkeys(t for _ in words_ for t in next(tokens)))
    out: dict[str, list[str]] = {}
    seen: set[str] = set(asked)
    for name, key, source in named:
        new = [t for t in _ADDED_STEMS[name, key] if t not in seen]
        seen.update(new)
        if new:
            out.setdefault(source, []).extend(new)
    return list(out.items())


# --- ranking -------------------------------------------------------------------------------


def _validate(query: SearchQuery) -> None:
    if not isinstance(query.q, str) or not query.q.strip():
        raise InvalidInput("the query must not be empty")
    if len(query.q) > MAX_QUERY:
        raise InvalidInput(f"the query is longer than {MAX_QUERY} characters")
    if isinstance(query.limit, bool) or not isinstance(query.limit, int) or not (
        1 <= query.limit <= MAX_LIMIT
    ):
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}")
    if query.scope is not None and query.scope not in vocab.SCOPES:
        raise InvalidInput(f"scope must be one of {', '.join(vocab.SCOPES)}")
    if query.since is not None and query.until is not None and query.since >= query.until:
        raise InvalidInput("since must be before until")


_MEMORY_COLUMNS = "m.rowid AS rid, m.id, m.title, m.kind, m.project, m.created_at, m.session_id"


_CANDIDATE_COLUMNS = (
    f"{_MEMORY_COLUMNS}, m.subtitle, m.concepts, substr(m.narrative, 1, 1000) AS head"
)


def _memory_candidates(
    conn: sqlite3.Connection, query: SearchQuery, shaped: Shaped, depth: int, matcher: _Matcher,
) -> list[tuple[sqlite3.Row, float]]:
    """The best ``depth`` memories by BM25 (higher is better), with their rows.

    Project-scoped, BM25 is computed here from the project's own statistics (FTS5's bm25()
    takes them from the whole table, so other projects would change the ranking, and its IDF
    walks each word's postings in every project).  Across projects, FTS5's bm25() is right."""
    if shaped.postings:
        # Dismissed rows and finer filters are checked on the rows: keep margin for them, and
        # rank everything again in the rare case they rejected more than the margin.
        ranked = _bm25(conn, query, shaped, matcher, 2 * depth)
        found = _fetch_ranked(conn, query, ranked, depth)
        if len(found) < depth and len(ranked) < len(set().union(*shaped.postings.values())):
            found = _fetch_ranked(conn, query, _bm25(conn, query, shaped, matcher), depth)
        return found
    match = _terms_match(shaped.terms, query)
    weights = ", ".join(str(w) for w in MEMORY_WEIGHTS)
    where, params = _filters(query, "m")
    # FTS5 sorts by its rank column itself (bm25() with these weights, ties in rowid order as
    # before), so the memory rows are read, filtered and their columns built only until the
    # list is full: sorted by an expression, SQLite read every match's row and built its columns
    # (the narrative's head too) before sorting (~2x slower at 50,000 memories).
    return [
        (r, -float(r["rank"]))
        for r in conn.execute(
            f"SELECT {_CANDIDATE_COLUMNS}, memory_fts.rank AS rank "
            "FROM memory_fts JOIN memory m ON m.rowid = memory_fts.rowid "
            f"WHERE memory_fts MATCH ? AND memory_fts.rank MATCH 'bm25({weights})'{where} "
            "ORDER BY memory_fts.rank LIMIT ?",
            (match, *params, depth),
        )
    ]


def _bm25(conn: sqlite3.Connection, query: SearchQuery, shaped: Shaped, matcher: _Matcher,
          keep: int | None = None) -> list[tuple[int, float]]:
    """Okapi BM25 over the scope's own statistics: N = memories in scope, a word's document
    frequency counted in scope, the scope's mean length.  A word counts once per memory here
    (FTS5 gives postings, not counts, without its whole-table statistics); the best
    ``TF_POOL`` are then scored again with the words' counts (``_with_counts``).  The length
    of the memory (FTS5's own token count) normalises as usual.  Ties: the newest first.

    ``keep``: only the best ``keep`` must be exact.  Lengths are read best-words-first, and
    reading stops once no memory left can beat the ``keep``-th score whatever its length
    (a memory's score is at most its IDF sum times (k1 + 1) / (1 + k1 (1 - b)))."""
    n_docs = max(1, shaped.scope_size)
    held: dict[int, float] = {}
    added: dict[tuple[int, str], float] = {}  # (memory, group) → its best added word
    for t, w, group in shaped.weighted():
        rows = shaped.postings.get(t, [])
        idf = w * _idf(n_docs, max(len(rows), shaped.doc_freq.get(t, 0)))
        if group == t:  # (the test out of the loop: a common word has ~1,400 postings)
            get = held.get
            for rid in rows:
                held[rid] = get(rid, 0.0) + idf
        else:
            for rid in rows:
                added[rid, group] = max(added.get((rid, group), 0.0), idf)
    for (rid, _), idf in added.items():
        held[rid] = held.get(rid, 0.0) + idf
    if not held:
        return []
    avg = _mean_length(conn, query, n_docs)
    k1, b = BM25_K1, BM25_B
    ceiling = (k1 + 1.0) / (1.0 + k1 * (1.0 - b))
    # (best first, ties newest first: descending on (score, rowid), built in C)
    order = sorted(held.items(), key=itemgetter(1, 0), reverse=True)
    scored: list[tuple[int, float]] = []
    sizes: dict[int, int] = {}
    best: list[float] = []  # the best ``keep`` scores so far (the bar is the last)
    start, step = 0, 256
    while start < len(order):
        part = order[start:start + step]
        start += step
        sizes.update(_doc_sizes(conn, [rid for rid, _ in part]))
        done = len(scored)
        scored.extend(
            (rid, s * (k1 + 1.0) / (1.0 + k1 * (1.0 - b + b * sizes.get(rid, avg) / avg)))
            for rid, s in part)
        if keep is not None and start < len(order):
            # (the kept best and this part's only: over every score so far, a query of common
            # words with ~1,400 postings took the best six times over, ~0.5 ms)
            best = heapq.nlargest(keep, [*best, *map(itemgetter(1), scored[done:])])
            if len(best) >= keep and order[start][1] * ceiling < best[-1]:
                break
    scored.sort(key=itemgetter(1, 0), reverse=True)
    if TF_POOL > 0 and scored:
        scored = _with_counts(conn, shaped, matcher, scored, n_docs, avg, sizes)
    return scored


def _with_counts(conn: sqlite3.Connection, shaped: Shaped, matcher: _Matcher,
                 scored: list[tuple[int, float]], n_docs: int, avg: float,
                 sizes: dict[int, int]) -> list[tuple[int, float]]:
    """The best ``TF_POOL`` of ``scored`` scored again with each word's count in the memory
    (at least 1: the postings say it holds it, maybe only as an identifier part)."""
    pool = scored[:TF_POOL]
    if matcher.pattern is None:
        return scored
    weighted = shaped.weighted()
    idf = {t: w * _idf(n_docs, max(len(shaped.postings.get(t, [])), shaped.doc_freq.get(t, 0)))
           for t, w, _ in weighted}
    among = {rid for rid, _ in pool}  # (the pool's holders only, as in ``_rank_memories``)
    holds = {t: among.intersection(shaped.postings.get(t, [])) for t, _, _ in weighted}
    k1, b = BM25_K1, BM25_B
    rows = conn.execute(
        "SELECT rowid, title || ' ' || subtitle || ' ' || substr(narrative, 1, ?) || ' ' || "
        "facts || ' ' || concepts FROM memory WHERE rowid IN (SELECT value FROM json_each(?))",
        (TF_TEXT, json.dumps([rid for rid, _ in pool])))
    texts = {int(r[0]): str(r[1]).lower() for r in rows}
    out = []
    for rid, old in pool:
        counts = matcher.counts(texts.get(rid, ""))
        norm = k1 * (1.0 - b + b * sizes.get(rid, avg) / avg)
        score = _grouped({t: idf[t] * _saturated(max(1, counts.get(t, 0)), k1, norm)
                          for t, _, _ in weighted if rid in holds[t]}, weighted)
        out.append((rid, score if score > 0 else old))
    out.sort(key=lambda p: (-p[1], -p[0]))
    return out + scored[TF_POOL:]


def _grouped(parts: dict[str, float], weighted: list[tuple[str, float, str]]) -> float:
    """A memory's score from its words' parts: the query's own words add up, and each query
    word's added words (``EXPAND_WEIGHT``) count once, the best of them."""
    total = 0.0
    best: dict[str, float] = {}
    for t, _, group in weighted:
        if t not in parts:
            continue
        if group == t:
            total += parts[t]
        else:
            best[group] = max(best.get(group, 0.0), parts[t])
    return total + sum(best.values())


def _saturated(tf: int, k1: float, norm: float) -> float:
    """BM25's term-frequency part: ``norm`` is k1 (1 - b + b len / mean len)."""
    return tf * (k1 + 1.0) / (tf + norm)


def _idf(n_docs: int, df: int) -> float:
    """BM25's IDF in the form that never goes negative (a word in over half the scope),
    counted as if the scope held at least ``MIN_SCOPE`` memories (see there)."""
    n_docs = max(n_docs, MIN_SCOPE)
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def _varint_sum(blob: bytes) -> int:
    """The sum of the SQLite varints in an FTS5 ``docsize`` blob (tokens per column)."""
    if blob.isascii():  # every column under 128 tokens: one byte each
        return sum(blob)
    total = value = 0
    for byte in blob:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            total += value
            value = 0
    return total


# Tokens per memory, per database, kept while ``memory_edits`` (schema 11) says no memory's
# indexed text changed: (that count, rowid → tokens).  A new memory is a new rowid, read once.
_SIZES: dict[str, tuple[int, dict[int, int]]] = {}
SIZES_KEPT = 400_000  # memories whose sizes a process keeps per database (~40 MB at most)


def _doc_sizes(conn: sqlite3.Connection, rowids: list[int]) -> dict[int, int]:
    """Tokens per memory, from FTS5's own ``docsize`` table (no memory row is read), or from
    this process's copy of what it read there while no memory's indexed text changed."""
    db_path = _db_path(conn)
    try:
        edits = int(conn.execute("SELECT n FROM memory_edits WHERE id = 1").fetchone()[0])
    except (sqlite3.OperationalError, TypeError):
        edits = -1  # a store from before schema 11 (or an in-memory one): nothing kept
    # (not inside a transaction: a memory it wrote may yet roll back, its rowid taken again)
    keep = edits >= 0 and bool(db_path) and not conn.in_transaction
    kept_edits, kept = _SIZES.get(db_path, (-1, {}))
    if kept_edits != edits or len(kept) > SIZES_KEPT:
        kept = {}
    known = {rid: kept[rid] for rid in rowids if rid in kept}
    missing = [rid for rid in rowids if rid not in known] if len(known) < len(rowids) else []
    if missing:
        # (plain tuples: a Row per size cost a one-word query on a common word ~0.2 ms at p95,
        # its ~1,400 sizes all read; the sum inline for the same reason)
        cur = conn.cursor()
        cur.row_factory = None
        read = {
            rid: sum(sz) if sz.isascii() else _varint_sum(sz)
            for rid, sz in cur.execute(
                "SELECT id, sz FROM memory_fts_docsize WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(missing),),
            )
        }
        known.update(read)
        if keep:
            kept.update(read)
    if keep:
        _SIZES[db_path] = (edits, kept)
    return known


def _db_path(conn: sqlite3.Connection) -> str:
    """The file of the connection's main database ("" in memory)."""
    return str(conn.execute("PRAGMA database_list").fetchone()[2])


# Mean memory length per (database, scope), kept while the scope's size stays within 10 %.
_MEAN_LENGTH: dict[tuple[str, str], tuple[int, float]] = {}
MEAN_SAMPLE = 2000  # the newest memories of the scope the mean is taken over


def _mean_length(conn: sqlite3.Connection, query: SearchQuery, n_docs: int) -> float:
    key = (str(conn.execute("PRAGMA database_list").fetchone()[2]), query.project or "")
    cached = _MEAN_LENGTH.get(key)
    if cached and abs(cached[0] - n_docs) * 10 <= cached[0]:
        return cached[1]
    # (plain tuples and the one-byte sum inline, as ``_doc_sizes``: a fresh process — a hook's
    # one search — always reads these 2,000 sizes, and a Row each cost ~0.4 ms of it)
    cur = conn.cursor()
    cur.row_factory = None
    if query.project:
        rows = cur.execute(
            "SELECT sz FROM memory_fts_docsize WHERE id IN (SELECT rowid FROM memory "
            "WHERE project = ? ORDER BY created_at DESC LIMIT ?)", (query.project, MEAN_SAMPLE))
    else:
        rows = cur.execute(
            "SELECT sz FROM memory_fts_docsize ORDER BY id DESC LIMIT ?", (MEAN_SAMPLE,))
    sizes = [sum(sz) if sz.isascii() else _varint_sum(sz) for sz, in rows]
    mean = max(1.0, sum(sizes) / len(sizes)) if sizes else 1.0
    _MEAN_LENGTH[key] = (n_docs, mean)
    return mean


def _fetch_ranked(
    conn: sqlite3.Connection, query: SearchQuery, ranked: list[tuple[int, float]], depth: int
) -> list[tuple[sqlite3.Row, float]]:
    """Rows of the best ``depth`` ranked memories that pass the query's filters (checked in
    SQL, a page at a time, so a filter that rejects many still fills the list)."""
    where, params = _filters(query, "m")
    out: list[tuple[sqlite3.Row, float]] = []
    start, size = 0, depth
    while start < len(ranked) and len(out) < depth:
        part = ranked[start:start + size]
        start += size
        size *= 2
        rows = {
            int(r["rid"]): r
            for r in conn.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memory m "
                f"WHERE m.rowid IN (SELECT value FROM json_each(?)){where}",
                (json.dumps([rid for rid, _ in part]), *params),
            )
        }
        out.extend((rows[rid], score) for rid, score in part if rid in rows)
    return out[:depth]


class _Matcher:
    """Which query stems a text holds: the stem or the typed word at the start of a word
    (close enough for tie-breakers), found in one regex pass.  One per query: compiling the
    pattern costs more than using it."""

    def __init__(self, shaped: Shaped) -> None:
        self.owner: dict[str, str] = {}
        for stem in [*shaped.terms, *shaped.common]:
            for alt in (stem.rstrip("*"), shaped.surface.get(stem, stem).rstrip("*")):
                self.owner.setdefault(alt, stem)
        alts = sorted(self.owner, key=len, reverse=True)
        self.pattern = _word_starts(alts) if alts else None
        self._facts: dict[str, tuple[frozenset[str], dict[str, int]]] = {}

    def found(self, text: str) -> set[str]:
        if self.pattern is None:
            return set()
        return {self.owner[m] for m in self.pattern.findall(text.lower())}

    def found_in_fact(self, text: str) -> set[str]:
        """``found`` over a fact's text with the identifier forms a memory's index holds too
        (``types-PyYAML`` is also typespyyaml, py, yaml).  Kept per text: the query's fact
        searches read the same facts again (a current fact's text weighs the stale ones)."""
        return set(self._fact(text)[0])

    def fact_counts(self, text: str) -> dict[str, int]:
        """``counts`` of a fact's text (lower-cased here), kept with ``found_in_fact``'s."""
        return self._fact(text)[1]

    def _fact(self, text: str) -> tuple[frozenset[str], dict[str, int]]:
        # One pass over the text serves both: no query word spans a space, so the matches in
        # "text idents" are the text's own followed by the identifier words'.
        known = self._facts.get(text)
        if known is None:
            counts = self.counts(text.lower())
            rest = self.found(_fact_text(text)[0])
            known = self._facts[text] = (frozenset(counts.keys() | rest), counts)
        return known

    def counts(self, low: str) -> dict[str, int]:
        """How often each query stem occurs in ``low`` (lower-cased text)."""
        out: dict[str, int] = {}
        if self.pattern is not None:
            for m in self.pattern.findall(low):
                owner = self.owner[m]
                out[owner] = out.get(owner, 0) + 1
        return out


# What a fact's text alone decides (its identifier words, its length in words), kept per text
# across queries: the facts a project's queries find are mostly the same few hundred, and
# working these out again cost a scoped query on the worker's store ~0.3 ms.
_FACT_TEXTS: dict[str, tuple[str, int]] = {}
FACT_TEXTS_KEPT = 20_000


def _fact_text(text: str) -> tuple[str, int]:
    """(``text``'s identifier words joined by spaces, its number of words)."""
    known = _FACT_TEXTS.get(text)
    if known is None:
        if len(_FACT_TEXTS) >= FACT_TEXTS_KEPT:
            _FACT_TEXTS.clear()
        known = _FACT_TEXTS[text] = (" ".join(identifier_words(text)), len(words(text)))
    return known


_WORD_REST = re.compile(r"\w*")
_WORD_CHAR = re.compile(r"\w")


def _word_starts(alts: list[str]) -> re.Pattern[str]:
    r"""Any of ``alts`` (tried in their order) at the start of a word: what ``\b(a|b|…)``
    finds, written as ``(a(?<!\w.)…|b(?<!\w.)…)`` — the word start checked after the first
    letter — so the pattern begins with a letter of the alternatives and the regex engine skips
    to the places that hold one (``\b`` first made it try every character of the text: the
    query's counting passes over its best memories' text took ~3x longer).  Same matches: for an
    alternative that begins with a word character, the boundary before it means the character
    before is no word character."""
    if not all(a and _WORD_CHAR.match(a) for a in alts):
        return re.compile(r"\b(" + "|".join(map(re.escape, alts)) + ")")
    return re.compile(
        "(" + "|".join(re.escape(a[0]) + r"(?<!\w.)" + re.escape(a[1:]) for a in alts) + ")")


def _row_text(row: sqlite3.Row) -> str:
    return " ".join((row["title"], row["subtitle"], row["concepts"], row["head"]))


# For each candidate (rowid, session, time), the rowids of the memories just before and after it
# in its session: one statement, so the index seeks stay in C.
_NEIGHBOUR_SIDE = """(SELECT n.rowid FROM memory n WHERE n.session_id = c.value ->> 1
    AND (n.created_at, n.rowid) {op} (c.value ->> 2, c.value ->> 0){where}
    ORDER BY n.created_at {order}, n.rowid {order} LIMIT 1 OFFSET {skip})"""


def _neighbour_rows(
    conn: sqlite3.Connection, query: SearchQuery, rows: list[sqlite3.Row],
    skip: tuple[str, ...] = NEIGHBOUR_SKIP,
) -> list[tuple[int, int, float]]:
    """(candidate rowid, neighbour rowid, share) for every neighbour within reach."""
    where, params = _filters(query, "n")
    if NEIGHBOURS_AMONG_TALK:
        where += f" AND n.kind NOT IN ({','.join('?' * len(skip))})"
        params = [*params, *skip]
    sides = []
    side_params: list[Any] = []
    shares = []
    for offset, share in NEIGHBOUR_OFFSETS:
        op, order = ("<", "DESC") if offset < 0 else (">", "ASC")
        sides.append(_NEIGHBOUR_SIDE.format(op=op, order=order, where=where, skip=abs(offset) - 1))
        side_params.extend(params)
        shares.append(share)
    payload = json.dumps([[r["rid"], r["session_id"], r["created_at"]] for r in rows
                          if r["session_id"]])
    out = []
    for found in conn.execute(
        f"SELECT c.value ->> 0, {', '.join(sides)} FROM json_each(?) c", (*side_params, payload)
    ):
        for i, share in enumerate(shares):
            if found[i + 1] is not None:
                out.append((int(found[0]), int(found[i + 1]), share))
    return out


def _similarities(conn: sqlite3.Connection, rows: list[sqlite3.Row], vector: Any) -> dict[int, float]:
    if vector is None or SEMANTIC_RERANK <= 0:
        return {}
    from aletheia import embed as embed

    try:
        return embed.similarities(conn, [r["rid"] for r in rows], vector)
    except Exception:  # a broken vector table must never break search
        return {}


def _rank_memories(
    conn: sqlite3.Connection, query: SearchQuery, shaped: Shaped, depth: int,
    matcher: _Matcher, vector: Any = None,
) -> list[tuple[float, Hit]]:
    candidates = _memory_candidates(conn, query, shaped, depth, matcher)
    rows = [r for r, _ in candidates]
    base: dict[int, float] = {}
    hits: dict[int, Hit] = {}
    several = COVER_BONUS > 0 and len(shaped.terms) > 1
    asked = set(shaped.terms)
    # Which query words a memory holds: from the postings where the ranking read them (exact,
    # every column), else from the text of the row.
    # (an added word covers the query word it stands for: "pytest" covers "tests")
    group = {t: g for t, _, g in shaped.weighted()}
    # (each word's holders among the candidates only: a set of a common word's ~1,400 postings
    # was built to be asked about 60)
    among = {r["rid"] for r in rows}
    holders = ([(group.get(t, t), among.intersection(p)) for t, p in shaped.postings.items()
                if EXPAND_COVERS or t not in shaped.expansions]
               if several and shaped.postings else [])
    sims = _similarities(conn, rows, vector)
    observed = _observed(conn, rows) if OBSERVED_BONUS and \
        _ASKS_OBSERVED.search(query.q) else set()
    for r, bm25 in candidates:
        score = bm25
        if several and (SUMMARY_COVER or r["kind"] not in vocab.SUMMARY_KINDS):
            held = (len({g for g, h in holders if r["rid"] in h}) if holders
                    else len(matcher.found(_row_text(r)) & asked))
            score *= 1.0 + COVER_BONUS * max(0, held - 1)
        if sims:
            score *= 1.0 + SEMANTIC_RERANK * max(0.0, sims.get(r["rid"], 0.0))
        if shaped.windows and any(a <= r["created_at"] < b for a, b in shaped.windows):
            score *= 1.0 + DATE_BONUS
        if r["rid"] in observed:
            score *= 1.0 + OBSERVED_BONUS
        base[r["rid"]] = score
        hits[r["rid"]] = Hit(r["id"], "memory", 0.0, r["title"], r["kind"], r["project"],
                             r["created_at"], "", r["session_id"], via=["keyword"])
    if RECENCY_BONUS and len(rows) > 1:
        by_time = sorted(rows, key=lambda r: (r["created_at"], r["rid"]))
        for i, r in enumerate(by_time):
            base[r["rid"]] *= 1.0 + RECENCY_BONUS * i / (len(by_time) - 1)
    final = dict(base)
    kept = 1.0  # (the share of the neighbour gain this question keeps: ``OBSERVED_NEIGHBOURS``)
    if OBSERVED_NEIGHBOURS < 1.0 and _asks_measured(query.q) and \
            any(r["kind"] == "tool_event" for r in rows):
        kept = OBSERVED_NEIGHBOURS
    if NEIGHBOUR_OFFSETS and rows and kept > 0:
        gained: dict[int, float] = {}
        skip = NEIGHBOUR_SKIP
        if TOOL_NEIGHBOURS_GAIN and _ASKS_OBSERVED.search(query.q):
            skip = tuple(k for k in NEIGHBOUR_SKIP if k != "tool_event")
        leaders = sorted((r for r in rows if r["kind"] not in NEIGHBOUR_SKIP),
                         key=lambda r: -base[r["rid"]])[:NEIGHBOURS_OF]
        for cand, rid, share in _neighbour_rows(conn, query, leaders, skip):
            share *= kept
            # The best neighbour counts, not their sum (a sum measured worse: it rewards
            # memories that merely sit in busy stretches of a session).
            gained[rid] = max(gained.get(rid, 0.0), share * base[cand])
        new = [rid for rid in gained if rid not in hits]
        if new:
            marks = ",".join("?" * len(new))
            for n in conn.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memory m WHERE m.rowid IN ({marks})", new
            ):
                if n["kind"] not in skip:  # (the others gain nothing: no Hit made)
                    hits[n["rid"]] = Hit(n["id"], "memory", 0.0, n["title"], n["kind"],
                                         n["project"], n["created_at"], "", n["session_id"],
                                         via=["neighbour"])
        for rid, gain in gained.items():
            if rid in hits and hits[rid].kind not in skip:
                final[rid] = final.get(rid, 0.0) + gain
    ordered = sorted(final, key=lambda rid: (-final[rid], hits[rid].id))
    return [(final[rid], hits[rid]) for rid in ordered[:depth]]


_AUTHORED = ("Write ", "Edit ", "MultiEdit ", "NotebookEdit ")


def _asks_measured(q: str) -> bool:
    """Does ``q`` ask for a measured value (``OBSERVED_NEIGHBOURS``)?"""
    return bool(_ASKS_MEASURED.search(q)) or \
        (bool(_ASKS_COUNT.search(q)) and not _ASKS_WHY.search(q))


def _observed(conn: sqlite3.Connection, rows: list[sqlite3.Row]) -> set[int]:
    """The tool events among ``rows`` with an output (the narrative after its input: what a
    command printed, what a read showed), whatever words it holds (see ``OBSERVED_BONUS``)."""
    # (a file written or edited shows what the agent wrote, not what it observed)
    tools = [r["rid"] for r in rows if r["kind"] == "tool_event"
             and not r["title"].startswith(_AUTHORED)]
    if not tools:
        return set()
    # (the narrative is "input: {…}\n\noutput:\n…": aletheia.capture.memory)
    return {int(rid) for rid, text in conn.execute(
        "SELECT rowid, substr(narrative, 1, ?) FROM memory "
        "WHERE rowid IN (SELECT value FROM json_each(?))", (TF_TEXT, json.dumps(tools)))
        if text.split("\n\noutput:\n", 1)[1:2] != [""]}


def _fact_scope(query: SearchQuery, where: str, params: Sequence[Any]) -> tuple[str, list[Any]]:
    """A project-scoped query's fact filter (``where`` on alias ``f2``) once more, as the set of
    rowids the index's matches are checked against before their rows are read: FTS5 matches the
    facts of every project, and looking each one up in ``fact`` cost a scoped query ~1 ms at p95
    (bench/scale.py --state read).  The filter is applied as before, so the same rows pass in
    the same order; ``+ 0`` keeps FTS5 from taking the set as one rowid lookup per fact.  One
    statement: one snapshot."""
    if not query.project:
        return "", []  # (across projects the set would be most of the table)
    return (f" AND (fact_fts.rowid + 0) IN (SELECT f2.rowid FROM fact f2 WHERE 1{where})",
            list(params))


def _rank_facts(
    conn: sqlite3.Connection, query: SearchQuery, shaped: Shaped, depth: int,
    matcher: _Matcher,
) -> list[tuple[float, Hit]]:
    """Facts found in their own index, scored on the memories' scale so the two merge into one
    ranking: BM25 of the query words a fact holds with their IDF in the memories in scope (the
    memories' own statistics), lengths normalised against the facts found, and the coverage
    bonus.  (Fused by rank instead, the best facts took the first six places whatever they
    held: a fact with one query word of four came before the memory holding all four.)"""
    match = " OR ".join(_fts_term(t) for t in shaped.terms)
    where, params = _filters(query, "f", facts=True)
    scope, scope_params = _fact_scope(query, *_filters(query, "f2", facts=True))
    columns = "f.id, f.text, f.kind, f.project, f.created_at, f.session_id, f.source_ids"
    if scope:
        # (bm25() of the scope's facts only, sorted after the filter)
        sql = (f"SELECT {columns}, bm25(fact_fts) AS rank FROM fact_fts JOIN fact f ON "
               f"f.rowid = fact_fts.rowid WHERE fact_fts MATCH ?{scope}{where} ORDER BY rank LIMIT ?")
    else:
        # Across projects FTS5 sorts by its own rank (the same bm25(), ties in rowid order), so
        # fact rows are read only until the list is full (``_memory_candidates``).
        sql = (f"SELECT {columns}, fact_fts.rank AS rank FROM fact_fts JOIN fact f ON "
               "f.rowid = fact_fts.rowid WHERE fact_fts MATCH ? AND fact_fts.rank MATCH 'bm25()'"
               f"{where} ORDER BY fact_fts.rank LIMIT ?")
    rows = conn.execute(sql, (match, *scope_params, *params, depth)).fetchall()
    asked = set(shaped.terms)
    several = COVER_BONUS > 0 and len(asked) > 1
    n_docs = max(1, shaped.scope_size)
    lengths = {r["id"]: max(1, _fact_text(r["text"])[1]) for r in rows}
    # (against the facts found: against the memories' mean, a short fact always won its
    # ties with the memory it came from, and Hit@5 on the dev part fell 82.4 -> 79.7)
    avg = sum(lengths.values()) / len(lengths) if lengths else 1.0
    k1, b = BM25_K1, FACT_B

    def score(r: sqlite3.Row) -> float:
        # The words the text holds, found the tie-breakers' way, with the identifier forms a
        # memory's index holds too (``types-PyYAML`` is also typespyyaml, py, yaml).
        found = matcher.found_in_fact(r["text"]) & asked
        bonus = 1.0 + COVER_BONUS * max(0, len(found) - 1) if several else 1.0
        # Counted like the memories' best (``TF_POOL``): the two stay on one scale.
        counts = matcher.fact_counts(r["text"]) if TF_POOL > 0 else {}
        norm = k1 * (1.0 - b + b * lengths[r["id"]] / avg)
        return FACT_SHARE * bonus * sum(
            _idf(n_docs, shaped.doc_freq.get(t, 0)) * _saturated(max(1, counts.get(t, 0)), k1, norm)
            for t in found)

    scored = sorted(((score(r), r) for r in rows), key=lambda p: (-p[0], p[1]["id"]))
    return [
        (sc, Hit(r["id"], "fact", 0.0, r["text"], r["kind"], r["project"], r["created_at"],
                 r["text"], r["session_id"], _json_list(r["source_ids"]), via=["fact"]))
        for sc, r in scored
    ]


def _demote_stale(
    conn: sqlite3.Connection, query: SearchQuery, shaped: Shaped, depth: int,
    matcher: _Matcher, memories: list[tuple[float, Hit]], facts: list[tuple[float, Hit]],
) -> list[tuple[float, Hit]]:
    """Knowledge updates: the old answer to a query — the evidence of a superseded fact the
    query is about, and the memories older than a change (recorded by the worker, or stated by
    a candidate it has not read yet) that name the value it replaced — is
    ranked at ``STALE_SHARE`` of its score (unless it is the evidence of a current fact the
    query found), and the evidence of the change just above the old answer's best, when the
    query finds both.  The old answer stays findable, below the new one."""
    match = " OR ".join(_fts_term(t) for t in shaped.terms)
    superseded = filters.Filter(project=query.project, scope=query.scope,
                                session_id=query.session_id, status="superseded")
    w = filters.facts(superseded, "f")
    w2 = filters.facts(superseded, "f2")
    scope, scope_params = _fact_scope(query, w2.sql(" AND "), w2.params)
    asked = set(shaped.terms)
    n_docs = max(1, shaped.scope_size)
    weight = {t: _idf(n_docs, shaped.doc_freq.get(t, 0)) for t in asked}

    def weighs(text: str) -> float:
        held = matcher.found_in_fact(text) & asked
        return sum(weight[t] for t in held)

    found: list[tuple[list[str], float, str]] = []  # (old evidence, its weight, its successor)
    for r in conn.execute(
        "SELECT f.text, f.source_ids, f.superseded_by FROM fact_fts "
        "JOIN fact f ON f.rowid = fact_fts.rowid "
        f"WHERE fact_fts MATCH ?{scope}{w.sql(' AND ')} ORDER BY bm25(fact_fts) LIMIT ?",
        (match, *scope_params, *w.params, depth),
    ):
        # (a superseded fact without a successor is the record of a change or a removal —
        # `poetry` was replaced, a file deleted — whose evidence is the change, not the old answer)
        if r["superseded_by"]:
            found.append((_json_list(r["source_ids"]), weighs(r["text"]), str(r["superseded_by"])))
    bar = STALE_MATCH * max([x for _, x, _ in found] + [weighs(h.title) for _, h in facts] + [0.0])
    # (old answer, the evidence of what replaced it)
    # (only where the old answer is among the candidates: elsewhere there is nothing to demote,
    # and its chain is not walked)
    ranked = {h.id for _, h in memories}
    about = [(old, successor) for old, x, successor in found
             if x > 0 and x >= bar and not ranked.isdisjoint(old)]
    current = (_current_evidence(conn, [successor for _, successor in about])
               if SUCCESSOR_SHARE > 0 else {})
    pairs = [(set(old), current.get(successor, [])) for old, successor in about]
    heads = _HeadTexts(conn)  # (the readings below match values in the same candidates' texts)
    if (REPLACED_VALUES or STATED_CHANGES) and query.project:
        pairs += _replaced_answers(conn, query, memories, heads)
    tied_from = len(pairs)
    pulled: set[str] = set()
    if MEASURES and query.project:
        # (the query asks for the measure and the change names its subject: however far below)
        measured, named_old = _measure_changes(conn, query, shaped, matcher, memories, heads)
        pairs += measured
        memories = memories + [(1e-9, h) for h in named_old]
        pulled |= {h.id for h in named_old}
    named_current: set[str] = set()
    if SLOT_CLAIMS and query.project:
        pairs += _claimed_changes(conn, query, memories, heads, named_current)
    if SET_AGAIN and query.project:
        pairs += _set_again(conn, query, memories, heads)
    swapped: list[tuple[set[str], list[str]]] = []
    if SWAPPED_NAMES and query.project:
        swapped, brought = _swapped_later(conn, query, memories, heads)
        memories = memories + [(1e-9, h) for h in brought]
        pulled |= {h.id for h in brought}
    if EDITED_VALUES and query.project:
        edited, brought = _edited_later(conn, query, memories, heads)
        pairs += edited
        memories = memories + [(1e-9, h) for h in brought]
        pulled |= {h.id for h in brought}
    if SESSION_SET and query.project:
        session_set, brought = _session_set(conn, query, memories, heads)
        pairs += session_set
        memories = memories + [(1e-9, h) for h in brought]
        pulled |= {h.id for h in brought}
    since_pairs = _said_since(memories, heads, matcher, set(shaped.terms)) \
        if SAID_SINCE and not _ASKS_WHY.search(query.q) else []
    if REVERTED and not _ASKS_PAST.search(query.q) and not _ASKS_WHY.search(query.q):
        since_pairs += _reverted(memories, heads, matcher, set(shaped.terms))
    if RERUN_LATER and not _ASKS_PAST.search(query.q):
        since_pairs += _rerun_later(memories, heads, matcher, set(shaped.terms))
    if swapped:
        # (a lift only: the older ones naming the swapped dependency may answer other things)
        score_at = {h.id: sc for sc, h in memories}
        since_pairs += [(max(old, key=lambda i: score_at.get(i, 0.0)), new[0]) for old, new in swapped]
    if not pairs and not since_pairs:
        return [p for p in memories if p[1].id not in pulled]
    score_of = {h.id: sc for sc, h in memories}
    found_by_facts = {sid for _, h in facts for sid in h.source_ids}
    stale: set[str] = set()
    lifted: dict[str, float] = {}
    for n, (old, successors) in enumerate(pairs):
        old -= set(successors)
        best = max((score_of.get(m, 0.0) for m in old), default=0.0)
        now = max((score_of.get(m, 0.0) for m in successors), default=0.0)
        if best <= 0 or now <= 0 or (n < tied_from and now < CHANGE_NEAR * best):
            # The change is far below the old answer for this query: the question is about the
            # old state itself (an error of that time, why it was dropped), not what holds now.
            # (A slot the query names is its subject however far: ``_claimed_changes``.)
            continue
        stale |= old - found_by_facts
        for m in successors:
            # just above the old answer's best (a tie would fall to the id), in their own order
            lifted[m] = max(lifted.get(m, 0.0), best * SUCCESSOR_SHARE * (1.0 + 1e-9) + 1e-9 * score_of.get(m, 0.0))
    if SLOT_FIRST and named_current:
        top_score = max((sc for sc, _ in memories), default=0.0)
        for m in named_current - stale:
            lifted[m] = max(lifted.get(m, 0.0), top_score * (1.0 + 1e-9) + 1e-9 * score_of.get(m, 0.0))
    for older, later in since_pairs:
        if older not in stale and later not in stale:
            lifted[later] = max(lifted.get(later, 0.0), score_of[older] * (1.0 + 1e-9) + 1e-9 * score_of[later])
    out = []
    for score, h in memories:
        if h.id in stale:
            score *= STALE_SHARE
        if h.id in pulled and h.id not in lifted:
            continue  # (brought in as a change it turned out not to be)
        out.append((max(score, lifted.get(h.id, 0.0)), h))
    return out


def _said_since(memories: list[tuple[float, Hit]], heads: _HeadTexts, matcher: _Matcher,
                asked: set[str]) -> list[tuple[str, str]]:
    """(older, later) for each two of the best prompts and answers where the later, below the
    older and near it (``CHANGE_NEAR``), says every query word the older holds (at least
    ``SAID_SINCE_WORDS``) in one sentence with a change's words (``SAID_SINCE``)."""
    from aletheia.changes import sentences

    talk = _best_talk(memories, heads)
    if len(talk) < 2:
        return []
    texts = heads.texts
    # (a stem that reads as a stop word — "one" is asked as "on" — matches the start of too many
    # words to name a subject)
    asked = {t for t in asked if t not in STOP_WORDS}
    held = {h.id: matcher.found(texts.get(h.id, "")) & asked for _, h in talk}
    if SAID_SINCE_SENTENCE:
        # (what the older says of the subject: its sentence holding the most query words)
        for _, h in talk:
            best = max((matcher.found(s) & asked for s in sentences(texts.get(h.id, ""))), key=len, default=set())
            held[h.id] = best if len(best) >= SAID_SINCE_WORDS else held[h.id]
    out = []
    for n, (sc, later) in enumerate(talk):
        text = texts.get(later.id, "")
        olders = [older for osc, older in talk[:n] if older.created_at < later.created_at
                  and len(held[older.id]) >= SAID_SINCE_WORDS and held[older.id] <= held[later.id]
                  and sc >= CHANGE_NEAR * osc]
        if not olders or not _said_anew(text, matcher, asked):
            continue
        # (the query words each sentence with a change's words says)
        said = [matcher.found(s) & asked for s in sentences(text) if _said_anew(s, matcher, asked)]
        out += [(older.id, later.id) for older in olders if any(held[older.id] <= w for w in said)]
    return out


def _best_talk(memories: list[tuple[float, Hit]], heads: _HeadTexts) -> list[tuple[float, Hit]]:
    """The best prompts and answers (of the first ``SAID_SINCE_READ``) that score, their texts
    read into ``heads`` when there are two to compare (``_said_since``, ``_reverted``)."""
    top = sorted(memories, key=lambda p: (-p[0], p[1].id))[:SAID_SINCE_READ]
    talk = [(sc, h) for sc, h in top if h.kind in _TALK_KINDS and sc > 0]
    if len(talk) >= 2:
        heads.read([h.id for _, h in talk])
    return talk


def _reverted(memories: list[tuple[float, Hit]], heads: _HeadTexts, matcher: _Matcher,
              asked: set[str]) -> list[tuple[str, str]]:
    """(older, later) for each two of the best prompts and answers where the later, near the older
    (``CHANGE_NEAR``) and holding a query word, says the project went back to a state (``_REVERT``)
    and the older says, in one sentence, that it had left it (every content word of the state
    with a word of leaving, ``_LEFT``): a revert (``REVERTED``)."""
    from aletheia.changes import sentences

    talk = _best_talk(memories, heads)
    if len(talk) < 2:
        return []
    texts = heads.texts
    asked = {t for t in asked if t not in STOP_WORDS}
    out = []
    for sc, later in talk:
        text = texts.get(later.id, "")
        # (every form of ``_REVERT`` says "back to" or "reverted to": a text without either is
        # not read with it, a pattern tried at each word)
        low = text.lower()
        states = [{w for w in content_words(m.group("to")) if len(w) >= 3 and w not in _COUNTING}
                  for m in _REVERT.finditer(text)] \
            if ("back to" in low or "reverted to" in low) and matcher.found(text) & asked else []
        states = [st for st in states if st]
        if not states:
            continue
        for osc, older in talk:
            if older.created_at >= later.created_at or osc <= sc or sc < CHANGE_NEAR * osc:
                continue
            left = [set(content_words(x)) for x in sentences(texts.get(older.id, "")) if _LEFT.search(x)]
            if any(st <= said for st in states for said in left):
                out.append((older.id, later.id))
    return out


def _said_anew(text: str, matcher: _Matcher, asked: set[str]) -> bool:
    """Does ``text`` hold a change's words other than the query's own ("How do I roll a change
    out?" asks about changes: its "change" says nothing changed)?"""
    return any(not matcher.found(m.group(0)) & asked for m in _SAID_ANEW.finditer(text))


class _HeadTexts:
    """Memories' head texts (``stated.head_text``: what the knowledge-update readings match
    values in), read once per query by whichever reading needs one first."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.texts: dict[str, str] = {}

    def read(self, ids_: list[str]) -> None:
        ids_ = [i for i in dict.fromkeys(ids_) if i not in self.texts]
        if ids_:
            self.texts.update((str(r[0]), stated.head_text(*r[1:])) for r in self.conn.execute(
                f"SELECT id, substr(narrative, 1, {stated.HEAD}), title, subtitle, concepts FROM memory "
                f"WHERE id IN ({','.join('?' * len(ids_))})", ids_))


EDITED_FROM = 3  # the best answers whose stated values are followed into later edits
_EDITS_SQL = (
    "SELECT m.id, m.title, m.kind, m.project, m.created_at, m.session_id, substr(m.narrative, 1, 4000) "
    "FROM memory_fts JOIN memory m ON m.rowid = memory_fts.rowid "
    "WHERE memory_fts MATCH ? AND m.kind = 'tool_event' AND (m.title LIKE 'Edit %' OR m.title LIKE 'MultiEdit %') "
    "AND m.created_at > ?{where} ORDER BY m.created_at LIMIT 30"
)
# What ``_EDITS_SQL``'s title test keeps, said to the index as well: an edit's title starts with
# the word edit or multiedit, so the index passes only those to the row reads (a value's match is
# mostly other events, whose rows — long outputs — were read to be told apart: ~25 % of it).
_EDIT_TITLES = " AND title : (edit OR multiedit)"


def _edited_later(conn: sqlite3.Connection, query: SearchQuery, memories: list[tuple[float, Hit]],
                  heads: _HeadTexts | None = None) -> tuple[list[tuple[set[str], list[str]]], list[Hit]]:
    """(old answer, the change's evidence) for each value the best answers state beside a query
    word that a later edit replaced at a key they name beside it (``aletheia.followed``), following the key's
    later edits to the newest; and the edits not among the candidates, as hits to add."""
    from aletheia import followed

    top = sorted(memories, key=lambda p: (-p[0], p[1].id))[:REPLACED_READ]
    talk = [h for _, h in top if h.kind in _TALK_KINDS][:EDITED_FROM]
    if not talk:
        return [], []
    heads = heads or _HeadTexts(conn)
    texts, read = heads.texts, heads.read

    # (the answers first: most queries' best answers state no value worth following)
    read([h.id for h in talk])
    asked = {w for w in words(query.q) if w not in STOP_WORDS}
    values = {v: h for h in reversed(talk) for v in followed.stated_values(texts.get(h.id, ""))
              if followed.asked_near(texts.get(h.id, ""), v, asked)}
    if not values:
        return [], []
    match = "(" + " OR ".join('"' + " ".join(re.split(r"\.", v)) + '"' for v in values) + ")" + _EDIT_TITLES \
        + _scope_match(query)
    where, params = _filters(query, "m")
    since = min(h.created_at for h in values.values())
    edits: list[tuple[Hit, str, str, str]] = []  # (edit, key, old, new), oldest first
    for r in conn.execute(_EDITS_SQL.format(where=where), (match, since, *params)):
        hit = Hit(r[0], "memory", 0.0, r[1], r[2], r[3], int(r[4]), session_id=r[5], via=["change"])
        edits += [(hit, key, was, now) for key, was, now in followed.replaced_at_keys(str(r[6] or ""))]
    if not edits:
        return [], []
    read([h.id for _, h in top])
    known = {h.id for _, h in memories}
    out: list[tuple[set[str], list[str]]] = []
    brought: dict[str, Hit] = {}
    for value, said_by in values.items():
        first = next((e for e in edits if e[0].created_at > said_by.created_at and followed.same_value(value, e[2])
                      and followed.about(texts.get(said_by.id, ""), value, e[1], asked)), None)
        if first is None:
            continue
        last, key, now = first[0], first[1], first[3]
        for e in edits:  # the key's later edits, each from the value the one before left
            if e[1] == key and e[0].created_at > last.created_at and followed.same_value(now, e[2]):
                last, now = e[0], e[3]
        said = re.compile(r"(?<![\w.])" + re.escape(value) + r"(?![\w])")
        old = {h.id for _, h in top if h.created_at < last.created_at and h.id != last.id
               and said.search(texts.get(h.id, ""))}
        if old:
            out.append((old, [last.id]))
            if last.id not in known:
                brought[last.id] = last
    return out, list(brought.values())


_SESSION_EDITS_SQL = (
    "SELECT m.id, m.title, m.kind, m.project, m.created_at, m.session_id, substr(m.narrative, 1, 4000) "
    "FROM memory m WHERE m.session_id IN ({marks}) AND m.kind = 'tool_event' "
    "AND (m.title LIKE 'Edit %' OR m.title LIKE 'MultiEdit %'){where} ORDER BY m.created_at LIMIT 60"
)
_KEY_EDITS_SQL = (
    "SELECT m.id, m.title, m.kind, m.project, m.created_at, m.session_id, substr(m.narrative, 1, 4000) "
    "FROM memory_fts JOIN memory m ON m.rowid = memory_fts.rowid "
    "WHERE memory_fts MATCH ? AND m.kind = 'tool_event' AND m.title = ? "
    "AND m.created_at > ?{where} ORDER BY m.created_at LIMIT 30"
)
_WORTH = re.compile(r"\d+\.\d+|\d{2,}")  # a value worth finding in prose: 0.8, 14 (not 2: every text has one)


def _session_set(conn: sqlite3.Connection, query: SearchQuery, memories: list[tuple[float, Hit]],
                 heads: _HeadTexts) -> tuple[list[tuple[set[str], list[str]]], list[Hit]]:
    """(old answer, the change) for each of the best prompts and answers whose own session edited
    a setting to a value it states ("Morven measured it at 0.8 so use that", then `kd = 0.5` →
    `kd = 0.8`) that a later edit of the file changed again (`kd = 0.8` → `0.5`, "go back to what
    Ewan had"): the session's words tie the value to the edit, though no word ties it to the key
    (``SESSION_SET``); the newest edit of the key is the change, brought in when it holds no query
    word."""
    from aletheia import followed

    top = sorted(memories, key=lambda p: (-p[0], p[1].id))[:REPLACED_READ]
    talk = [h for _, h in top if h.kind in _TALK_KINDS and h.session_id][:EDITED_FROM]
    if not talk:
        return [], []
    asked = {w for w in words(query.q) if w not in STOP_WORDS}
    where, params = _filters(query, "m")
    known = {h.id for _, h in memories}
    out: list[tuple[set[str], list[str]]] = []
    brought: dict[str, Hit] = {}
    edits_of: dict[str, list[tuple[Hit, list[tuple[str, str, str]]]]] = {}
    sessions = sorted({h.session_id or "" for h in talk})
    for r in conn.execute(_SESSION_EDITS_SQL.format(marks=",".join("?" * len(sessions)), where=where),
                          (*sessions, *params)):
        edits_of.setdefault(str(r[5]), []).append(
            (Hit(r[0], "memory", 0.0, r[1], r[2], r[3], int(r[4]), session_id=r[5], via=["change"]),
             followed.replaced_at_keys(str(r[6] or ""))))
    if not edits_of:
        return [], []
    heads.read([h.id for h in talk if h.session_id in edits_of])
    for h in talk:
        text = heads.texts.get(h.id, "")
        for edit, changes in edits_of.get(h.session_id or "", []):
            for key, was, now in changes:
                if not _WORTH.fullmatch(now) or not re.search(r"(?<![\w.])" + re.escape(now) + r"(?![\w]|\.\d)", text):
                    continue
                # (the query is about the value: two of its words beside the new or the old value
                # where the session says it; a session says many things)
                if max(followed.asked_near(text, v, asked) for v in (now, was)) < 2:
                    continue
                match = '"' + " ".join(_WORD.findall(key)) + '"' + _scope_match(query)
                later = ((Hit(r[0], "memory", 0.0, r[1], r[2], r[3], int(r[4]), session_id=r[5], via=["change"]),
                          followed.replaced_at_keys(str(r[6] or "")))
                         for r in conn.execute(_KEY_EDITS_SQL.format(where=where),
                                               (match, edit.title, edit.created_at, *params)))
                last, value = _newest_of_key(later, key, edit, now)
                if last.id != edit.id and value != now:
                    out.append(({h.id, edit.id}, [last.id]))
                    if last.id not in known:
                        brought[last.id] = last
    return out, list(brought.values())


# A later edit of a manifest swapping a dependency for another (``SWAPPED_NAMES``) answers the query
# when at least SWAPPED_NAMED of the SWAPPED_FROM best candidates older than it name the old one.
# (With one of the best three, every question whose best answer names a pervasive dependency in
# passing got the swap lifted in: a dozen answers one place lower on dev-3, dev-4 and dev-5, MRR
# dev-4 0.649 -> 0.645, dev-5 0.642 -> 0.635, though it also fixed sv-120 and bw-127.)
SWAPPED_FROM = 5
SWAPPED_NAMED = 2
# A question about an earlier state ("before the first automated upload", "what was it
# originally"): the older run of a command is its answer, not the newer.
_ASKS_PAST = re.compile(r"\b(?:before|first|initial\w*|original\w*|earlier|previous\w*|used to|at first|"
                        r"back then|old|older|was|were|did we (?:start|begin))\b", re.I)


_TOOK = re.compile(r"(?<![\w.])\d+(?:\.\d+)? ?(?:ms|s|secs?|seconds?|m|mins?|minutes?|h)\b")


# A command run again (``RERUN_LATER``) is the same line with its output trimmed otherwise (`| head
# -3`, then `| head -2`), or the same one program's version asked however the command around it
# is written (`clasp --version && npm ls -g …` after `npm i -g … ; clasp --version && clasp login`,
# `ssh box '… && cobc --version'` after `cobc --version | head -3`).  On against off
# (bench/coding_recall.py, tool-rich / --compress): dev-9 newest-first 58.3 -> 62.5 / 54.2 ->
# 58.3, Hit@5 82.0 -> 82.6 / 81.4 -> 82.0 (ol-064 7 -> 4 / 7 -> 3); dev-8 newest-first 35 -> 45 /
# 35 -> 45, Hit@5 78.8 -> 79.3 / equal (sx-120, cb-122); dev-6 gu-145 4 -> 3; dev-3 sv-021 9 -> 10
# (a test run's later output above the earlier, both below the top 5); the rest and --talk-only
# identical.
_RUN_PARTS = re.compile(r"\s*(?:&&|\|\||[;|'\"(])\s*")
# (`-v` asks a version only alone at the end, `node -v`: with more after it, `curl -v URL`, `grep -v
# PATTERN`, `cp -v a b`, it is verbose or inverted, and two such lines are not one command)
_VERSION_ASKED = re.compile(r"(?:sudo\s+)?([a-z][\w.+-]{0,30})\s+(?:(?:--?version|-V|version)(?:\s|$)|-v\s*$)")
# What only trims a command's output (`| head -3`, `| tail -n 1`): the same command either way.
_TRIMMED = re.compile(r"\s*\|\s*(?:head|tail)(?:\s+-n)?(?:\s+-?\d+)?(?=\s*(?:\||&&|;|$))")
VERSION_RUNS = True


def _run_key(title: str, text: str = "") -> str:
    """What makes two commands one command run twice (``_rerun_later``): the same line with its
    output trimmed otherwise, or the same one program's version asked in both (``VERSION_RUNS``;
    ``text``, the event's stored text, for a title cut short)."""
    if VERSION_RUNS:
        from aletheia.changes import edit_input

        data = edit_input(text) if text else None
        whole = data.get("command") if data else None
        command = whole.splitlines()[0] if isinstance(whole, str) and whole.strip() else title.partition("$ ")[2]
        asked = {m.group(1) for part in _RUN_PARTS.split(command) if (m := _VERSION_ASKED.match(part))}
        if len(asked) == 1:
            return f"version:{asked.pop()}" + (" (failed)" if title.endswith(" (failed)") else "")
        return _TRIMMED.sub("", title)
    return title


def _rerun_later(memories: list[tuple[float, Hit]], heads: _HeadTexts, matcher: _Matcher,
                 asked: set[str]) -> list[tuple[str, str]]:
    """(older, newer) for each command run twice among the best candidates with another output
    the second time, the newer ranked below the older and holding every query word it holds
    (``RERUN_LATER``): what it printed last is what holds now (`eas build:version:get` printed
    versionCode 14, later 22).  Not when the older printed words of the query the newer does not
    (the lint findings a question quotes, then "0 issues")."""
    top = sorted(memories, key=lambda p: (-p[0], p[1].id))[:REPLACED_READ]
    shell = [h for _, h in top if h.kind == "tool_event" and h.title.startswith(("Bash: ", "Shell: "))]
    # (a long command's title is cut: its whole first line is in the stored input)
    cut = [h.id for h in shell if VERSION_RUNS and h.title.removesuffix(" (failed)").endswith("…")]
    heads.read(cut)
    runs: dict[str, list[Hit]] = {}
    for h in shell:
        runs.setdefault(_run_key(h.title, heads.texts.get(h.id, "") if h.id in cut else ""), []).append(h)
    runs = {t: hs for t, hs in runs.items() if len(hs) > 1}
    if not runs:
        return []
    heads.read([h.id for hs in runs.values() for h in hs])
    asked = {t for t in asked if len(t) > 1 and t not in STOP_WORDS}  # (the "1" of "1.4" is in any number)
    out = []
    for hs in runs.values():
        # (what it printed: the head text goes on with the title, subtitle and concepts; how long
        # it took differs on every run and says nothing changed)
        printed = {h.id: _TOOK.sub("", heads.texts.get(h.id, "").partition("\n\noutput:\n")[2]
                                   .rsplit("\n" + h.title, 1)[0]) for h in hs}
        newest = max(hs, key=lambda h: (h.created_at, h.id))
        best = hs[0]  # (the best ranked of them)
        # (a failed run and its fix are an error and what fixed it, not an old and a new state)
        failed = any(printed[h.id].startswith("Exit code") for h in (best, newest))
        if best.id != newest.id and printed[best.id] and printed[newest.id] and not failed \
                and printed[best.id] != printed[newest.id] \
                and matcher.found(printed[best.id]) & asked <= matcher.found(printed[newest.id]) & asked:
            out.append((best.id, newest.id))
    return out


# The edits of a manifest the query may see, after a time: the project's (schema 12's partial
# index) and the global ones (``memory_global``), the query's filters deciding.
_MANIFEST_EDITS_SQL = (
    "SELECT m.id, m.title, m.kind, m.project, m.created_at, m.session_id, substr(m.narrative, 1, 4000) "
    f"FROM memory m WHERE m.rowid IN (SELECT rowid FROM memory WHERE project = ? AND created_at > ? AND "
    f"{schema.MANIFEST_EDIT} UNION ALL SELECT rowid FROM memory WHERE scope = 'global' AND created_at > ? AND "
    f"{schema.MANIFEST_EDIT}) AND m.created_at > ?{{where}} ORDER BY m.created_at LIMIT 30"
)


def _swapped_later(conn: sqlite3.Connection, query: SearchQuery, memories: list[tuple[float, Hit]],
                   heads: _HeadTexts) -> tuple[list[tuple[set[str], list[str]]], list[Hit]]:
    """(old answer, the change's evidence) for each dependency one of the best candidates names
    that a later edit of a manifest swapped for another (``followed.swapped_names``: `{:timex, …}`
    → `{:tz, …}`): the candidates older than the edit naming it, and not the new one, are the old
    answer; the edit is brought in, though it holds no word of the query (``SWAPPED_NAMES``)."""
    from aletheia import followed

    top = sorted(memories, key=lambda p: (-p[0], p[1].id))[:REPLACED_READ]
    if len(top) < 2:
        return [], []
    since = min(h.created_at for _, h in top[:SWAPPED_FROM])
    where, params = _filters(query, "m")
    swaps: list[tuple[Hit, str, str]] = []
    for r in conn.execute(_MANIFEST_EDITS_SQL.format(where=where), (query.project, since, since, since, *params)):
        hit = Hit(r[0], "memory", 0.0, r[1], r[2], r[3], int(r[4]), session_id=r[5], via=["change"])
        swaps += [(hit, old, new) for old, new in followed.swapped_names(str(r[6] or ""))]
    if not swaps:
        return [], []
    heads.read([h.id for _, h in top])
    texts = heads.texts
    asked = {w for w in words(query.q) if w not in STOP_WORDS}
    known = {h.id for _, h in memories}
    out: list[tuple[set[str], list[str]]] = []
    brought: dict[str, Hit] = {}
    for edit, was, now in swaps:
        if was.lower() in asked and not _WHY_CHANGED.search(query.q):
            continue  # (the query names the old one: it asks about that time)
        said = re.compile(rf"(?<![\w-]){re.escape(was)}(?![\w-])", re.I)
        said_new = re.compile(rf"(?<![\w-]){re.escape(now)}(?![\w-])", re.I)
        if sum(1 for _, h in top[:SWAPPED_FROM] if h.created_at < edit.created_at
               and said.search(texts.get(h.id, ""))) < SWAPPED_NAMED:
            continue  # (the query is about the swapped one only when the best name it)
        old = {h.id for _, h in top if h.created_at < edit.created_at and h.id != edit.id
               and said.search(texts.get(h.id, "")) and not said_new.search(texts.get(h.id, ""))}
        if old:
            out.append((old, [edit.id]))
            if edit.id not in known:
                brought[edit.id] = edit
    return out, list(brought.values())


REWRITE_TEXT = 20_000  # characters of a Write's event read for the lines it replaced
_FILE_TEXT_SQL = "SELECT id, substr(narrative, 1, ?) FROM memory WHERE id IN ({marks})"


def _set_again(conn: sqlite3.Connection, query: SearchQuery, memories: list[tuple[float, Hit]],
               heads: _HeadTexts) -> list[tuple[set[str], list[str]]]:
    """(old answer, the change) for each setting a Write or Edit among the best candidates left
    at a value that a later Edit of the same file among the candidates changed
    (``aletheia.followed``: `(def max-shifts-per-week 3)` → `2`, then `2` → `3`), followed along
    the key's later edits to the newest: the older write, and what its session's prompts and
    answers among the best say of the key beside that value, are the old answer; the newest edit,
    the change (``SET_AGAIN``).  Only where the query is about the setting: it names the key's
    words, or it asks for a period and the key names a unit of time (`graceDays`).  (Where the
    session's answer merely named the key beside the value with two query words, a PHP version
    change answered a question about a port.)"""
    from aletheia import followed, measures

    top = sorted(memories, key=lambda p: (-p[0], p[1].id))[:REPLACED_READ]
    firsts = [h for _, h in top if h.kind == "tool_event" and h.title.startswith(_WRITTEN)]
    if not firsts:
        return []
    paths = {h.title.partition(" ")[2] for h in firsts}
    edits = sorted((h for _, h in memories if h.kind == "tool_event" and h.title.startswith(_EDITED)
                    and h.title.partition(" ")[2] in paths), key=lambda h: (h.created_at, h.id))
    firsts = [f for f in firsts if any(e.created_at > f.created_at and e.title.partition(" ")[2]
                                       == f.title.partition(" ")[2] for e in edits)]
    if not firsts:
        return []
    wanted = list(dict.fromkeys([*(h.id for h in firsts), *(h.id for h in edits)]))
    texts = {str(r[0]): str(r[1] or "").partition("\noutput:")[0] for r in conn.execute(
        _FILE_TEXT_SQL.format(marks=",".join("?" * len(wanted))), [REWRITE_TEXT, *wanted])}
    changes = {e.id: followed.replaced_at_keys(texts.get(e.id, "")) for e in edits}
    talk = [h for _, h in top if h.kind in _TALK_KINDS]
    heads.read([h.id for h in talk])
    typed = {w for w in words(query.q) if w not in STOP_WORDS}
    # (a question for a period, and a key that names its unit: `graceDays`, `timeout_ms`)
    periods = "period" in measures.asked(query.q)
    out: list[tuple[set[str], list[str]]] = []
    for first in firsts:
        path = first.title.partition(" ")[2]
        later = [e for e in edits if e.created_at > first.created_at and e.title.partition(" ")[2] == path]
        left = changes.get(first.id)
        followed_keys: set[str] = set()
        for e in later:
            for key, was, now in changes[e.id]:
                if key in followed_keys or not _leaves(left, texts.get(first.id, ""), key, was):
                    continue
                followed_keys.add(key)
                last, now = _newest_of_key(((e2, changes[e2.id]) for e2 in later), key, e, now)
                if not followed.key_words(key) & typed and not (periods and measures.keyed_period(
                        _SNAKE.sub("_", key).lower().replace("-", "_"), was) is not None):
                    continue
                said = {h.id for h in talk if h.session_id == first.session_id
                        and followed.names_key(heads.texts.get(h.id, ""), was, key, set())}
                out.append(({first.id, *said}, [last.id]))
    return out


def _newest_of_key(edits: Iterable[tuple[Hit, list[tuple[str, str, str]]]], key: str, last: Hit,
                   value: str) -> tuple[Hit, str]:
    """Follow ``key`` from ``last`` (which left it at ``value``) along later ``edits`` (in time
    order, each with its changes), each from the value the one before left: the newest edit of
    the key and the value it left (``SET_AGAIN``, ``SESSION_SET``)."""
    from aletheia import followed

    for edit, changes in edits:
        step = [n for k, w, n in changes if k == key and followed.same_value(value, w)]
        if edit.created_at > last.created_at and step:
            last, value = edit, step[0]
    return last, value


def _leaves(left: list[tuple[str, str, str]] | None, text: str, key: str, value: str) -> bool:
    """Does a Write or Edit leave ``key`` at ``value``: an Edit's diff (``left``, its changes)
    sets it there, or a Write's ``text`` says the key and the value with no word between?"""
    if left is not None:
        return any(k == key and n == value for k, _, n in left)
    return re.search(r"(?<![\w-])" + re.escape(key) + r"[^\w\n]{1,8}" + re.escape(value) + r"(?![\w.])",
                     text) is not None


_WRITTEN = ("Write ", "Edit ", "MultiEdit ")
_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_EDITED = ("Edit ", "MultiEdit ")


# The words a question asks for a measure with: not its subject.
_MEASURE_WORDS = frozenset("how long often frequently time much many percent percentage".split())


def _measure_changes(conn: sqlite3.Connection, query: SearchQuery, shaped: Shaped, matcher: _Matcher,
                     memories: list[tuple[float, Hit]], heads: _HeadTexts
                     ) -> tuple[list[tuple[set[str], list[str]]], list[Hit]]:
    """(old answer, the change) for each kind of measure the query asks for (``MEASURES``), among
    the best prompts and answers that say one in a sentence naming the query's subject: the
    newest saying a new value with a change's words (and those of its session saying it) is the
    change, the older ones of other sessions saying none of its new values its old answer."""
    from aletheia import measures
    from aletheia.changes import sentences

    kinds = measures.asked(query.q)
    if not kinds:
        return [], []
    top = sorted(memories, key=lambda p: (-p[0], p[1].id))[:REPLACED_READ]
    talk = [h for _, h in top if h.kind in _TALK_KINDS]
    if not talk:
        return [], []
    heads.read([h.id for h in talk])
    subject = {t for t in shaped.terms if shaped.surface.get(t, t) not in _MEASURE_WORDS and t not in _MEASURE_WORDS}
    if not subject:
        return [], []
    said: dict[str, list[tuple[int, str, set[float]]]] = {}  # kind → (time, memory, values)
    words_of: dict[tuple[str, str], list[str]] = {}  # (memory, kind) → the words saying its values
    set_anew: dict[tuple[str, str], set[float]] = {}  # (memory, kind) → values said with a change's words
    for h in talk:
        values: dict[str, set[float]] = {}
        for sentence in sentences(heads.texts.get(h.id, "")):
            said_here = measures.found_words(sentence, kinds)
            if said_here and matcher.found(sentence) & subject:
                cue = measures.CHANGE_CUE.search(sentence) is not None
                for _, kind, value, raw in said_here:
                    values.setdefault(kind, set()).add(value)
                    words_of.setdefault((h.id, kind), []).append(raw)
                    if cue:
                        set_anew.setdefault((h.id, kind), set()).add(value)
        for kind, held in values.items():
            said.setdefault(kind, []).append((h.created_at, h.id, held))
    session = {h.id: h.session_id for h in talk}
    score_of = {h.id: sc for sc, h in top}
    out: list[tuple[set[str], list[str]]] = []
    brought: list[Hit] = []
    for kind, entries in said.items():
        entries.sort(key=lambda e: (e[0], e[1]))
        # The newest one saying a value no older session said is the change (it may name the old
        # value too: "sat for the full 10 s timeout … 3 second timeout"; its own session may have
        # said it first: the prompt asking for it); the older ones of other sessions saying none
        # of its new values, its old answer.
        for n in range(len(entries) - 1, 0, -1):
            here = session[entries[n][1]]
            earlier = [e for e in entries[:n] if session[e[1]] != here]
            before = set().union(*(v for _, _, v in earlier))
            # (comparable with what the best of them says: "20 s" a load test ran for beside a
            # word of the query is no new session length of "every week")
            best = max(earlier, key=lambda e: score_of[e[1]], default=None)
            fresh = {v for v in entries[n][2] - before if best and measures.comparable(kind, v, best[2])
                     and v in set_anew.get((entries[n][1], kind), set())}
            if fresh:
                old = {i for _, i, v in earlier if not v & fresh}
                current = [i for t, i, v in entries if v & fresh and (session[i] == here or t > entries[n][0])]
                if old:
                    out.append((old, current))
                break
        else:
            # No candidate changed it: a later prompt or answer may, naming the old value beside
            # the new one and nothing of the query ("once a day is too coarse … make the check
            # twice a day"), found by the best answer's words for it.
            best = max(entries, key=lambda e: score_of[e[1]])
            change = _measure_named_later(conn, query, kind, best, words_of.get((best[1], kind), []))
            if change is not None:
                out.append(({i for _, i, v in entries if v & best[2]}, [change.id]))
                brought.append(change)
                continue
        if kind == "period" and EDITED_MEASURES:
            # (the newest saying, changed since only in an edit: "keeps generations for a month",
            # then `--delete-older-than 30d` → `21d`)
            newest = max(entries, key=lambda e: (e[0], e[1]))
            edit = _measure_edited(conn, query, newest[0], newest[2])
            if edit is not None:
                out.append(({i for t, i, _ in entries if t < edit.created_at}, [edit.id]))
                brought.append(edit)
    return out, brought


_UNIT_SUFFIXES = (("s", 1), ("m", 60), ("min", 60), ("h", 3600), ("d", 86400), ("w", 604800))


def _measure_edited(conn: sqlite3.Connection, query: SearchQuery, since: int, periods: set[float]) -> Hit | None:
    """The last of the edits made after ``since`` that replace one of ``periods``, spelled in
    code with its unit (`30d` for "a month", `90s`) or as a bare number at a key naming its unit
    (`sample_interval_s = 10`), at one key (``followed.replaced_at_keys``), following that key's
    later edits to the newest (``EDITED_MEASURES``)."""
    spelled = sorted({f"{int(v // u)}{suffix}" for v in periods for suffix, u in _UNIT_SUFFIXES
                      if v >= u and v % u == 0})
    # (the bare numbers only when no edit spells the unit: a number is in many more edits, and
    # the oldest 30 are read)
    bare = sorted({str(int(v // u)) for v in periods for _, u in _UNIT_SUFFIXES if v >= u and v % u == 0})
    return _period_edit(conn, query, since, periods, spelled) or _period_edit(conn, query, since, periods, bare)


# A key naming the unit of its bare number (`sample_interval_s`, `pollSeconds`, `TTL_MINUTES`).
_KEY_UNIT = re.compile(r"(?:_((?i:s|secs?|seconds|mins?|minutes|h|hours|d|days))|(?<=[a-z])(Secs?|Seconds|Mins?|Minutes|"
                       r"Hours|Days))$")
_UNIT_SECONDS = {"s": 1, "sec": 1, "secs": 1, "seconds": 1, "min": 60, "mins": 60, "minutes": 60, "h": 3600,
                 "hours": 3600, "d": 86400, "days": 86400}


def _period_edit(conn: sqlite3.Connection, query: SearchQuery, since: int, periods: set[float],
                 spelled: list[str]) -> Hit | None:
    from aletheia import followed, measures

    if not spelled:
        return None
    match = "(" + " OR ".join(f'"{t}"' for t in spelled) + ")" + _EDIT_TITLES + _scope_match(query)
    where, params = _filters(query, "m")
    edits: list[tuple[Hit, str, str, str]] = []
    for r in conn.execute(_EDITS_SQL.format(where=where), (match, since, *params)):
        hit = Hit(r[0], "memory", 0.0, r[1], r[2], r[3], int(r[4]), session_id=r[5], via=["change"])
        edits += [(hit, key, was, now) for key, was, now in followed.replaced_at_keys(str(r[6] or ""))]

    def period(raw: str, key: str) -> float | None:
        found = measures.found(raw, frozenset({"period"}))
        if len(found) == 1 and found[0][0] == 0:
            return found[0][2]
        unit = _KEY_UNIT.search(key)
        if unit and re.fullmatch(r"\d+", raw):
            return float(int(raw) * _UNIT_SECONDS[(unit.group(1) or unit.group(2)).lower()])
        return None

    first = next((e for e in edits if period(e[2], e[1]) in periods and period(e[3], e[1]) is not None), None)
    if first is None:
        return None
    last, key, now = first[0], first[1], first[3]
    for e in edits:  # the key's later edits, each from the value the one before left
        if e[1] == key and e[0].created_at > last.created_at and e[2] == now:
            last, now = e[0], e[3]
    return last


_NAMED_LATER_SQL = (
    "SELECT m.id, m.title, m.kind, m.project, m.created_at, m.session_id, substr(m.narrative, 1, {head}) "
    "FROM memory_fts JOIN memory m ON m.rowid = memory_fts.rowid WHERE memory_fts MATCH ? "
    "AND m.kind IN ('prompt', 'response', 'note', 'turn') AND m.created_at > ?{where} ORDER BY m.created_at DESC LIMIT 20"
)


def _measure_named_later(conn: sqlite3.Connection, query: SearchQuery, kind: str,
                         best: tuple[int, str, set[float]], said: list[str]) -> Hit | None:
    """The newest later prompt or answer of the scope that names one of ``said`` (the words the
    best answer says its measure with) and, with a change's words, another value of the kind
    close to it: the change of that measure, though it holds no word of the query."""
    from aletheia import measures
    from aletheia.changes import sentences

    phrases = {" ".join(words(raw)) for raw in said if words(raw)}
    if not phrases:
        return None
    match = "(" + " OR ".join(f'"{p}"' for p in sorted(phrases)) + ")" + _scope_match(query)
    where, params = _filters(query, "m")
    for r in conn.execute(_NAMED_LATER_SQL.format(head=stated.HEAD, where=where), (match, best[0], *params)):
        text = str(r[6] or "")
        new = {v for k, v, _, _ in measures.said(sentences(text), anew=True) if k == kind} - best[2]
        if any(measures.comparable(kind, v, best[2]) for v in new):
            return Hit(r[0], "memory", 0.0, r[1], r[2], r[3], int(r[4]), session_id=r[5], via=["change"])
    return None


# The values change statements dropped (the extractor's ``replaced:<value>`` records), with
# when and by which memories: (old value, the change's time, its evidence).
_REPLACED_SQL = (
    "SELECT text, source_ids, coalesce(observed_at, created_at) AS at FROM fact "
    "WHERE project = ? AND subject >= 'replaced:' AND subject < 'replaced;' AND status != 'dismissed' "
    "ORDER BY at DESC LIMIT 200"
)
_BACKTICKED = re.compile(r"^`([^`]+)`")
# Per database and project: the version of the project's ``context_state`` (every insert,
# update and delete of one of its facts, or of a global one, raises it; the SessionStart block
# is kept on the same count) and the replaced values read at it.  A scoped query read and parsed
# the same ~100 rows each time (~0.2 ms of a read store's scoped query, bench/scale.py --state
# read); now two small reads say they still hold.
_REPLACED: dict[tuple[str, str], tuple[int, list[tuple[str, int, list[str]]]]] = {}
REPLACED_READ = 20  # the best candidates an old answer is looked for in (the page is 5-10)
STATED_READ = 10  # … and the best of them read for changes they state
_TALK_KINDS = ("prompt", "response", "note", "turn")


def _replaced_values(conn: sqlite3.Connection, project: str) -> list[tuple[str, int, list[str]]]:
    """(old value, the change's time, its evidence) for the project's replaced values
    (``_REPLACED_SQL``), newest first, read again only once the project's facts changed."""
    # (the version first: a change committed between the two reads is then read again next time)
    version = blocks.version(conn, project)
    key = (str(conn.execute("PRAGMA database_list").fetchone()[2]), project)
    known = _REPLACED.get(key)
    if known is not None and version >= 0 and known[0] == version:
        return known[1]
    values = []
    for r in conn.execute(_REPLACED_SQL, (project,)):
        m = _BACKTICKED.match(str(r["text"]))
        if m:
            values.append((m.group(1), int(r["at"] or 0), _json_list(r["source_ids"])))
    if version >= 0 and key[0]:  # (-1: a store from before context_state; "": in memory)
        _REPLACED[key] = (version, values)
    return values


def _replaced_answers(
    conn: sqlite3.Connection, query: SearchQuery, memories: list[tuple[float, Hit]],
    heads: _HeadTexts | None = None,
) -> list[tuple[set[str], list[str]]]:
    """(old answer, the change's evidence) for each value a later change replaced that the query
    found: the candidates older than the change, above it, that name the old value ("Sign with
    HS256" once `HS256` was replaced).  The changes are the worker's records and, with
    ``STATED_CHANGES``, what the best candidates the worker has not read yet say they changed
    (a prompt or an answer: "Switch the JWTs from HS256 to RS256", "Jest is gone"), so it
    works before the worker ran too."""
    from aletheia.changes import mentions

    score_of = {h.id: sc for sc, h in memories}
    changes: list[tuple[str, int, list[str], bool]] = []  # (…, whether its session is all new)
    if REPLACED_VALUES and query.project:
        for value, at, sources in _replaced_values(conn, query.project):
            evidence = [e for e in sources if e in score_of]
            if evidence:
                changes.append((value, at, evidence, False))
    top = sorted(memories, key=lambda p: (-p[0], p[1].id))[:REPLACED_READ]
    heads = heads or _HeadTexts(conn)
    texts, read = heads.texts, heads.read

    olds: dict[str, list[str]] = {}
    if STATED_CHANGES:
        # (once the worker has read a memory, its records say what it changed; what an unread
        # one says is worked out once and kept: aletheia.stated; an edit says it in its diff:
        # `jwt_algorithm = "HS256"` → "RS256")
        talk = [h.id for _, h in top[:STATED_READ] if h.kind in _TALK_KINDS or _is_edit(h)]
        olds = stated.unread_olds(conn, talk)
        for _, h in top[:STATED_READ]:
            if h.id in olds:
                # (what came before it in its session — the prompt asking for the change, the
                # work doing it — is the change too, not the old answer)
                changes += [(old, h.created_at, [h.id], True) for old in olds[h.id]]
    plans = []
    said_at = _said_at(conn, top) if changes else {}
    created = {h.id: h.created_at for _, h in memories}
    for value, at, evidence, whole in changes:
        if mentions(query.q, value) and not _WHY_CHANGED.search(query.q):
            # The query names the old value and does not ask why it went (an error Jest printed,
            # how bcrypt was set up): it asks about that time, whose memories answer it.
            continue
        now = max(score_of[e] for e in evidence)
        sessions = {h.session_id for _, h in memories if h.id in evidence} if whole else set()
        # Only candidates above the change and near enough for it to count can be its old answer.
        above = [h.id for sc, h in top if now < sc and now >= CHANGE_NEAR * sc
                 and said_at.get(h.id, h.created_at) < at
                 and not _part_of_change(h, value, sessions, olds) and h.id not in evidence]
        if above:
            plans.append((value, above, evidence))
    read([i for _, above, evidence in plans for i in above + evidence])
    # A change's evidence that is itself older than another change and names the value that one
    # replaced is an old answer too (an answer reporting "passlib is gone" that also says the
    # tokens are signed HS256, before HS256 was replaced): it is lifted over nothing.
    # (each value looked for once per text: a project the worker has read has hundreds of
    # changes, the same memories are evidence for many, and searching again for every plan cost
    # a query up to 20 ms at 50,000 memories, bench/scale.py --state read)
    when = {value: at for value, at, _, _ in changes}
    seen: dict[tuple[str, str], bool] = {}

    def names(value: str, mid: str) -> bool:
        key = (value, mid)
        if key not in seen:
            seen[key] = mentions(texts.get(mid, ""), value)
        return seen[key]

    out: list[tuple[set[str], list[str]]] = []
    for value, above, evidence in plans:
        old = {i for i in above if names(value, i)}
        current = [e for e in evidence if not any(
            v != value and said_at.get(e, created[e]) < when[v] and names(v, e) for v in when)]
        if old and current:
            out.append((old, current))
    return out


_HEADS = ("SELECT id, kind, title, substr(narrative, 1, {head}) FROM memory WHERE id IN ({marks}) "
          "AND kind IN ('prompt', 'response', 'note', 'turn', 'tool_event')")


def _claimed_changes(
    conn: sqlite3.Connection, query: SearchQuery, memories: list[tuple[float, Hit]],
    heads: _HeadTexts | None = None, named_current: set[str] | None = None,
) -> list[tuple[set[str], list[str]]]:
    """(old answer, the change's evidence) for each slot the best candidates show with two values
    (``aletheia.claims``): the ones showing the value the newest shows, after the last other one,
    are the change; the older ones showing another value, its old answer.  Not when the query
    names an old value (it asks about that time), unless it asks why it went."""
    top = sorted(memories, key=lambda p: (-p[0], p[1].id))[:REPLACED_READ]
    if len(top) < 2:
        return []
    asked = {w for w in words(query.q) if w not in STOP_WORDS}
    runtimes = _ASKS_VERSION.search(query.q) is not None
    keys = {w for w in asked if len(w) >= 3} | {w.rstrip("s") for w in asked if len(w) >= 4}
    from aletheia.changes import value_pattern
    from aletheia.claims import file_words, slot_values

    at = {h.id: h.created_at for _, h in top}
    marks = ",".join("?" * len(top))
    by_slot: dict[str, list[tuple[int, str, str]]] = {}
    files: dict[str, set[str]] = {}  # slot → the words of the files that show it
    for r in conn.execute(_HEADS.format(head=stated.HEAD, marks=marks), [h.id for _, h in top]):
        path = str(r[2] or "").partition(" ")[2] if str(r[1]) == "tool_event" else ""
        for slot, value in slot_values(str(r[1]), str(r[2] or ""), str(r[3] or ""), runtimes=runtimes,
                                       keys=keys).items():
            by_slot.setdefault(slot, []).append((at[str(r[0])], str(r[0]), value))
            if path and "/" in path:
                files.setdefault(slot, set()).update(file_words(path))
    out: list[tuple[set[str], list[str]]] = []
    out += _tool_changes(conn, query, top, asked, heads or _HeadTexts(conn))
    for slot, entries in by_slot.items():
        if len({v for _, _, v in entries}) < 2 or not (_asks_slot(query.q, slot) or (
                slot.startswith("setting:") and files.get(slot, set()) & asked)):
            continue
        entries.sort()
        last = entries[-1][2]
        changed = max(t for t, _, v in entries if v != last)
        current = [i for t, i, v in entries if v == last and t > changed]
        old = {i for t, i, v in entries if v != last and t < min(t for t, i2, _ in entries if i2 in current)}
        if any(re.search(value_pattern(v), query.q, re.I) for t, i, v in entries if i in old) \
                and not _WHY_CHANGED.search(query.q):
            continue
        if old and current:
            out.append((old, current))
            if named_current is not None and _names_version_of(query.q, slot):
                named_current.update(current)
    return out


def _tool_changes(conn: sqlite3.Connection, query: SearchQuery, top: list[tuple[float, Hit]],
                  asked: set[str], heads: _HeadTexts) -> list[tuple[set[str], list[str]]]:
    """(old answer, the change's evidence) for each purpose the query names ("What runs the unit
    tests?") where a prompt or an answer among the best candidates says another tool of it is now
    the one in use ("switched the tests over to Vitest"), however it words it: the older
    candidates naming another tool of the purpose (and not that one) are the old answer."""
    from aletheia.changes import value_pattern
    from aletheia.claims import PURPOSES, asks_purpose

    purposes = [p for p in PURPOSES if asks_purpose(asked, p)]
    talk = [h for _, h in top if h.kind in _TALK_KINDS or (h.kind == "tool_event" and h.title.startswith("Bash: "))]
    if not purposes or len(talk) < 2:
        return []
    at = {h.id: h.created_at for h in talk}
    kind = {h.id: h.kind for h in talk}
    # (a command says which tool it installs, not what it greps for: only its installs count;
    # both read once per memory and kept: aletheia.stated)
    kept = stated.tool_claims(conn, [h.id for h in talk], tuple(purposes))
    claims = {h.id: kept.get(h.id, {}) for h in talk}
    # (the text only of the ones that claim a tool of what is asked)
    heads.read([i for i, c in claims.items() if any(p in c for p in purposes)])
    texts = {h.id: heads.texts.get(h.id, "") for h in talk}
    out: list[tuple[set[str], list[str]]] = []
    for purpose in purposes:
        entries = sorted((at[i], i, c[purpose][0], c[purpose][1]) for i, c in claims.items() if purpose in c)
        nows = [e for e in entries if e[3]]
        if not nows:
            continue
        t0, _, tool, _ = nows[-1]
        said = re.compile(value_pattern(tool), re.I)
        old = {i for t, i, v, _ in entries if v != tool and t < t0 and not said.search(texts[i])
               and kind[i] != "tool_event" or v != tool and t < t0 and kind[i] == "tool_event"}
        if not old or re.search(r"|".join(value_pattern(v) for t, i, v, _ in entries if i in old), query.q, re.I) \
                and not _WHY_CHANGED.search(query.q):
            continue  # (the query names the old tool: it asks about that time)
        since = max(at[i] for i in old)
        current = [i for t, i, v, _ in entries if v == tool and t > since]
        if current:
            out.append((old, current))
    return out


_ASKS_VERSION = re.compile(r"\b(?:versions?|runtime|release|lts|upgrad\w*|bump\w*|major)\b", re.I)


def _asks_slot(q: str, slot: str) -> bool:
    """Is the query about the slot, by its name: the runtime and its version ("Which Node version
    are we on?", not "Which PHP framework…"), a word of the setting's key ("the FX timeout" for
    `FX_TIMEOUT_SECONDS`)?  A change tied to the question only by nearness is not its answer."""
    from aletheia.claims import key_parts

    family, _, name = slot.partition(":")
    asked = {w for w in words(q) if w not in STOP_WORDS}
    if family == "runtime":
        names = {"node": ("node", "nodejs", "node.js"), "go": ("go", "golang")}.get(name, (name,))
        return bool(asked & set(names)) and _ASKS_VERSION.search(q) is not None
    if family == "version":  # a named thing's version: "What Kotlin version is the build on?"
        named = set(re.split(r"[-_.]+", name)) <= asked
        return named and _ASKS_VERSION.search(q) is not None
    parts = {p for p in key_parts(name) if len(p) >= 3 and p not in STOP_WORDS}
    return any(w.rstrip("s") in parts or w in parts for w in asked)


def _names_version_of(q: str, slot: str) -> bool:
    """Does the query ask for the version of the runtime or the thing of ``slot`` by naming it
    beside the word ("Which Elixir release…", "the version of Go?"), not a version of something
    else that names it ("the version of the Go linter runner")?"""
    family, _, name = slot.partition(":")
    if family not in ("runtime", "version") or not _asks_slot(q, slot):
        return False
    names = {"node": "node(?:\\.?js)?", "go": "go(?:lang)?"}.get(name, re.escape(name).replace("\\-", "[- ]?"))
    # (its compiler, toolchain or interpreter is the thing itself: "Which Swift compiler release…")
    return re.search(rf"\b(?:{names}) (?:(?:compiler|toolchain|interpreter) )?(?:versions?|releases?|runtime|major|lts)\b|"
                     rf"\b(?:versions?|releases?) of (?:the )?(?:{names})\b(?! [a-z]+ (?:runner|library|plugin|client|"
                     rf"runtime|package|module|sdk|cli|tool)\b)(?!-)", q, re.I) is not None


# A question about why a value went ("Why did we get rid of passlib?", "What was wrong with
# MySQL?"): the change answers it, with its reason.
_WHY_CHANGED = re.compile(r"\b(?:why|reason|wrong|problem|issue|made us|instead|rid of|drop|switch|mov(?:e|ed) "
                          r"(?:off|away)|replac|chang)", re.I)


def _part_of_change(h: Hit, value: str, sessions: set[str | None], olds: dict[str, list[str]]) -> bool:
    """What came before a stated change in its session is the change too — the work doing it,
    the prompt asking for it ("Switch the JWTs from HS256 to RS256") — unless it is a prompt or
    an answer read as saying no such change ("Hash the passwords with passlib", before the answer
    reports "passlib is gone")."""
    return h.session_id in sessions and not (
        h.id in olds and h.kind in _TALK_KINDS and value.lower() not in map(str.lower, olds[h.id]))


def _is_edit(h: Hit) -> bool:
    return h.kind == "tool_event" and h.title.startswith(("Edit ", "MultiEdit "))


def _said_at(conn: sqlite3.Connection, top: list[tuple[float, Hit]]) -> dict[str, int]:
    """When a worker's session summary says what it says: its session's last event, not when the
    worker wrote it (a summary of a session older than a change, written after it, is as old as
    its session: "orbitcal … on Java 17, built with Maven")."""
    sessions = {h.session_id for _, h in top if h.kind == "summary" and h.session_id}
    if not sessions:
        return {}
    marks = ",".join("?" * len(sessions))
    last = dict(conn.execute(f"SELECT id, last_event_at FROM session WHERE id IN ({marks})",
                             sorted(sessions)).fetchall())
    return {h.id: int(last[h.session_id]) for _, h in top
            if h.kind == "summary" and last.get(h.session_id) is not None}


def _current_evidence(conn: sqlite3.Connection, fact_ids: list[str]) -> dict[str, list[str]]:
    """For each of ``fact_ids``, the source memories of the current end of its supersede chain
    (a few links at most): an active fact, or the record of the change that ended the slot
    (`poetry` was replaced, a dependency removed), whose evidence is the session that made the
    change.  The chains are walked together, one read per link (many superseded facts share a
    successor: a query across projects asked ~40 single-row reads)."""
    out: dict[str, list[str]] = {}
    at = {f: f for f in dict.fromkeys(fact_ids)}  # a chain's start → where it has got to
    for _ in range(8):
        if not at:
            break
        wanted = sorted(set(at.values()))
        marks = ",".join("?" * len(wanted))
        rows = {str(r["id"]): r for r in conn.execute(
            f"SELECT id, status, superseded_by, source_ids FROM fact WHERE id IN ({marks})", wanted)}
        for start, now in list(at.items()):
            row = rows.get(now)
            if row is not None and row["status"] == "superseded" and row["superseded_by"]:
                at[start] = str(row["superseded_by"])
                continue
            del at[start]
            out[start] = (_json_list(row["source_ids"])
                          if row is not None and row["status"] in ("active", "superseded") else [])
    for start in at:  # (a chain longer than 8 links: nothing, as before)
        out[start] = []
    return out


def _json_list(value: Any) -> list[str]:
    try:
        out = json.loads(value or "[]")
    except ValueError:
        return []
    return [str(v) for v in out] if isinstance(out, list) else []


SNIPPET_WORDS = 12
_TOKEN = re.compile(r"\S+")


def _snippets(conn: sqlite3.Connection, hits: list[Hit], matcher: _Matcher) -> None:
    """A short extract of each memory shown and where it holds a query word (``marks``): the
    first place in the narrative that holds one (the head of the narrative when none does).
    Built here from the one row read for the page: FTS5's snippet() re-ran the query per hit.
    A fact's snippet is its text, marked the same way."""
    wanted = [h for h in hits if h.type == "memory"]
    for h in hits:
        low = h.snippet.lower()
        if h.type == "fact" and matcher.pattern is not None and len(low) == len(h.snippet):
            h.marks = _marks(low, matcher.pattern, 0, len(low))
    if not wanted:
        return
    marks = ",".join("?" * len(wanted))
    texts = {
        str(r[0]): str(r[1])
        for r in conn.execute(f"SELECT id, narrative FROM memory WHERE id IN ({marks})",
                              [h.id for h in wanted])
    }
    for h in wanted:
        h.snippet, h.marks = _snippet(texts.get(h.id, ""), matcher)


def _marks(low: str, pattern: re.Pattern[str], lo: int, hi: int,
           shift: int = 0) -> list[list[int]]:
    """[start, end) of each query word in ``low[lo:hi]`` (a typed prefix runs to its word's
    end), moved by ``shift``."""
    out = []
    for m in pattern.finditer(low, lo, hi):
        rest = _WORD_REST.match(low, m.end())
        out.append([m.start() + shift, (rest.end() if rest else m.end()) + shift])
    return out


def _snippet(text: str, matcher: _Matcher) -> tuple[str, list[list[int]]]:
    low = text.lower()
    pattern = matcher.pattern
    first = pattern.search(low) if pattern is not None else None
    if pattern is None or first is None or len(low) != len(text):  # (lower() changed a length: positions differ)
        return text[:160], []
    # Tokens around the first match only (a narrative can be 32,000 characters).
    lo = max(0, first.start() - 80)
    hi = first.start() + 400
    toks = list(_TOKEN.finditer(text, lo, hi))
    at = next((i for i, t in enumerate(toks) if t.end() > first.start()), 0)
    start = max(0, at - 3)
    out: list[str] = []
    marks: list[list[int]] = []
    pos = 1 if toks and toks[start].start() > 0 else 0  # after the leading "…"
    shown = toks[start:start + SNIPPET_WORDS]
    # (the query words of the tokens shown, found in one pass and told to their tokens: no query
    # word holds a space, so none runs from one token into the next)
    found = iter(_marks(low, pattern, shown[0].start(), shown[-1].end()) if shown else [])
    mark = next(found, None)
    for t in shown:
        while mark is not None and mark[0] < t.end():
            if mark[0] >= t.start():  # (none is between two tokens; were one, it is not shown)
                marks.append([mark[0] + pos - t.start(), mark[1] + pos - t.start()])
            mark = next(found, None)
        out.append(t.group())
        pos += len(t.group()) + 1
    joined = " ".join(out)
    if toks and (toks[start].start() > 0):
        joined = "…" + joined
    if start + SNIPPET_WORDS < len(toks) or hi < len(text):
        joined += "…"
    return joined, marks


def _query_vector(conn: sqlite3.Connection, query: SearchQuery) -> Any | None:
    """The query's embedding, or None when the extra is absent, off or failing."""
    if query.semantic is False:
        return None
    from aletheia import embed as embed  # stdlib-only until a model is loaded

    if query.semantic is None and not embed.enabled(conn):
        return None
    try:
        return embed.query_vector(query.q)
    except Exception:  # the model failing must never break search
        return None


def _semantic(
    conn: sqlite3.Connection, query: SearchQuery, vector: Any, depth: int
) -> list[Hit] | None:
    """Nearest memories by embedding (None when the vector table fails)."""
    from aletheia import embed as embed

    where, params = _filters(query, "m")
    try:
        found = embed.nearest(conn, vector, where, params, depth)
    except Exception:  # a broken vector table must never break search
        return None
    return [
        Hit(r["id"], "memory", 0.0, r["title"], r["kind"], r["project"], r["created_at"], "",
            r["session_id"], via=["semantic"])
        for r in found
    ]


def search(conn: sqlite3.Connection, query: SearchQuery) -> list[Hit]:
    """Ranked memories and facts for ``query``: the same list in every interface."""
    _validate(query)
    shaped = shape_query(conn, query)
    depth = max(DEPTH, query.limit * 3)
    fused: dict[str, tuple[float, Hit]] = {}

    def add(hits: list[Hit], weight: float, *, only_new: bool = False) -> None:
        for rank, hit in enumerate(hits):
            score = weight / (RRF_K + rank + 1)
            if hit.id in fused and only_new:
                continue
            if hit.id in fused:
                old_score, old = fused[hit.id]
                old.via = old.via + [v for v in hit.via if v not in old.via]
                fused[hit.id] = (old_score + score, old)
            else:
                fused[hit.id] = (score, hit)

    vector = _query_vector(conn, query)
    matcher = _Matcher(shaped)
    if shaped.terms:
        memories = _rank_memories(conn, query, shaped, depth, matcher, vector)
        facts: list[tuple[float, Hit]] = []
        if query.include_facts and FACT_SHARE > 0 and not (query.kind or query.tool or query.pinned):
            facts = _rank_facts(conn, query, shaped, depth, matcher)
        if STALE_SHARE < 1.0 and query.include_facts:
            memories = _demote_stale(conn, query, shaped, depth, matcher, memories, facts)
        # One keyword ranking: facts and memories by score on one scale.
        merged = sorted([*memories, *facts], key=lambda p: (-p[0], p[1].id))[:depth]
        add([h for _, h in merged], MEMORY_WEIGHT)
    if vector is not None and SEMANTIC_WEIGHT > 0:
        semantic = _semantic(conn, query, vector, depth)
        if semantic:
            # What the keywords found is already re-ranked by similarity; this list adds what
            # they missed (adding to both measured worse: it shuffles near-equal keyword ranks).
            add(semantic, SEMANTIC_WEIGHT, only_new=True)
    # A memory that came only as a session neighbour (it holds no query word) never takes the
    # place of one that holds a query word: neighbours only fill what is left of the page.
    ranked = sorted(fused.values(),
                    key=lambda p: (p[1].via == ["neighbour"], -p[0], p[1].id))[: query.limit]
    out = []
    for score, hit in ranked:
        hit.score = round(score, 6)
        out.append(hit)
    if shaped.terms:
        _snippets(conn, out, matcher)
    return out
