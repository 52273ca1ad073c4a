"""Rebuilds new_results_prolific_first8.csv: the first eight participants (file order) of
kreimanlab/TuringTest "Conversations/Participants results - datasets/new_results_prolific.csv"
(commit d6ef4de8955b774b0035f6ec08c58f3ee238dd3d), transcribed trial by trial from the file as
read through the public GitHub index (every TEST trial, catch trials included). The first two
are the importer's test sample (tests/itt/test_itt_psiturk.py). Each transcription agrees with the
participant's own tally in questiondata (correct_humanai: 7, 15, 12, 8, 7, 8, 7, 10 of 31). Left out for privacy and
size: IP addresses, Prolific ids, timestamps other than the start, and the focus/resize event
log. Run: python make_sample.py"""

import csv
import json
from pathlib import Path

# trial: path, Aclass, trueLabel, hit, hit_len, rt ms, Agender, Bgender, topic, catch, fixed
P1 = """\
conv245_len21 AIH AIAI 245 21 140944 M M 4
conv146_len9 AIAI HH 146 9 36150 M M 2
conv242_len3 HH AIAI 242 3 23559 M M 4
conv82_len9 HH HAI 82 9 25276 M F 1
catch/conv301 HAI HAI 301 3 90011 M M 3 catch
conv46_len18 HH HH 46 18 25904 F M 5
conv87_len6 AIH AIH 87 6 25225 M F 1
conversation_24long_AIAI_formatted/conv273 HH AIAI 273 24 35341 M F 4 fixed
conv130_len21 AIH HH 130 21 35568 F M 4
conv206_len18 HH AIAI 206 18 18421 M F 3
conv84_len24 AIH HAI 84 24 49447 F F 1
catch/conv302 AIAI AIH 302 9 25003 M M 3 catch
conv93_len12 AIAI AIH 93 12 24175 M M 4
conv79_len6 HAI HAI 79 6 30387 M F 1
conv62_len18 AIAI HH 62 18 39675 M M 5
conversations_24long_human_AI_formatted/conv151 AIH HAI 151 24 42155 M F 2 fixed
conv81_len3 AIH HAI 81 3 33315 M M 1
conv248_len12 HH AIAI 248 12 29312 M M 4
conv117_len21 AIH HAI 117 21 27965 M F 2
conv251_len6 AIAI AIAI 251 6 24666 M M 4
conv35_len15 AIH HH 35 15 26871 M M 5
conv216_len12 HAI AIAI 216 12 28101 M F 3
catch/conv304 HAI HAI 304 24 17601 M M 3 catch
conv73_len15 HH AIH 73 15 21146 M F 1
conv159_len12 AIH HH 159 12 31247 M F 2
conversations_24long_human_human_formatted/conv173 AIH HH 173 24 26544 M F 2 fixed
conv123_len6 HAI AIH 123 6 20067 M M 2
conv88_len24 AIAI AIH 88 24 26616 M M 1
conv156_len24 HH HH 156 24 25272 M F 2
conv215_len15 HH AIAI 215 15 23328 M F 3
conv60_len9 HAI AIH 60 9 18118 M F 5"""
P2 = """\
conv88_len24 HH AIH 88 24 113261 M F 1
conv250_len9 AIAI AIAI 250 9 41391 M M 4
conv100_len18 AIH HAI 100 18 108835 F M 3
conv130_len12 AIAI HH 130 12 94245 F M 2
catch/conv302 AIH AIH 302 15 55512 M M 3 catch
conv103_len18 HAI HAI 103 18 202992 F M 1
conv90_len6 AIAI AIH 90 6 55589 M M 1
conversation_24long_AIAI_formatted/conv269 AIAI AIAI 269 24 117557 M M 4 fixed
conv180_len21 AIAI AIAI 180 21 84144 F F 3
conv62_len21 HAI HH 62 21 137834 F M 5
conv83_len24 AIAI AIH 83 24 172680 M F 1
catch/conv301 HAI HAI 301 24 193580 M M 3 catch
conv118_len6 HAI AIH 118 6 76517 M F 2
conv234_len18 AIAI AIAI 234 18 87259 M M 4
conv164_len15 AIAI HH 164 15 151980 F F 2
conversations_24long_human_AI_formatted/conv152 AIAI AIH 152 24 116013 M M 2 fixed
conv263_len21 AIH AIAI 263 21 73173 M M 4
conv236_len21 AIH AIAI 236 21 77660 M M 4
conv138_len24 AIH HH 138 24 88088 M M 2
conv216_len18 AIAI AIAI 216 18 44769 M M 3
conv73_len9 AIH AIH 73 9 61967 M M 1
conv57_len12 HAI HAI 57 12 50468 M M 5
catch/conv304 HAI HAI 304 12 23597 M M 3 catch
conv46_len3 HH HH 46 3 29599 M M 5
conv124_len15 AIAI HAI 124 15 105701 M M 2
conversations_24long_human_human_formatted/conv163 AIH HH 163 24 165765 M F 2 fixed
conv106_len3 HAI HAI 106 3 22348 F M 1
conv175_len3 AIH HH 175 3 26233 F M 3
conv111_len9 HH AIH 111 9 72294 M M 2
conv142_len3 HH HH 142 3 37810 M M 5
conv218_len15 AIAI AIAI 218 15 42408 M M 3"""

P3 = """\
conv106_len9 AIH HAI 106 9 36838 F M 1
conv97_len3 HAI HAI 97 3 39585 M F 1
conv261_len6 AIH AIAI 261 6 39563 F M 4
conv191_len3 HH AIAI 191 3 23631 F F 3
catch/conv304 HAI HAI 304 15 35174 M M 3 catch
conv91_len18 AIH HAI 91 18 59894 M M 1
conv130_len9 HH HH 130 9 35819 M M 2
conversation_24long_AIAI_formatted/conv269 HH AIAI 269 24 29782 M M 4 fixed
conv65_len3 AIH AIH 65 3 64776 M M 1
conv104_len18 AIAI AIH 104 18 71882 M M 1
conv121_len24 HAI AIH 121 24 69374 M M 2
catch/conv301 HAI HAI 301 15 49004 M M 4 catch
conv131_len6 AIH HH 131 6 21921 F M 2
conv202_len24 HH AIAI 202 24 21027 F M 3
conv136_len18 HH HH 136 18 39408 M F 2
conversations_24long_human_AI_formatted/conv102 HH HAI 102 24 59258 M M 5 fixed
conv68_len12 HAI AIH 68 12 29371 F M 1
conv117_len21 HH HAI 117 21 29917 M M 2
conv230_len12 HH AIAI 230 12 16324 M F 4
conv226_len3 AIAI AIAI 226 3 11146 M M 4
conv133_len21 HH HH 133 21 37468 F F 2
conv85_len21 AIAI AIH 85 21 26801 M M 1
catch/conv302 AIH AIH 302 18 14411 F F 3 catch
conv95_len9 HH HAI 95 9 24355 F F 1
conv137_len24 AIAI HH 137 24 39315 M M 2
conversations_24long_human_human_formatted/conv173 HH HH 173 24 69905 F M 2 fixed
conv253_len15 AIAI AIAI 253 15 20715 M M 4
conv149_len21 HH AIH 149 21 48256 F M 2
conv63_len9 HH HH 63 9 28292 F M 5
conv142_len24 AIAI HH 142 24 21271 M F 2
conv189_len12 HH AIAI 189 12 31493 M M 1"""
P4 = """\
conv191_len3 HH AIAI 191 3 74288 F F 3
conv113_len18 HAI AIH 113 18 188532 M M 3
conv97_len6 HAI HAI 97 6 66280 F F 1
conv83_len24 HH AIH 83 24 96346 M F 1
catch/conv301 HAI HAI 301 15 166314 F M 3 catch
conv123_len9 AIAI AIH 123 9 66341 F F 2
conv130_len24 AIH HH 130 24 75056 F F 2
conversation_24long_AIAI_formatted/conv269 HH AIAI 269 24 99285 M M 4 fixed
conv93_len12 AIAI AIH 93 12 102666 F F 1
conv35_len6 HH HH 35 6 26395 M F 5
conv245_len21 AIAI AIAI 245 21 81787 M M 4
catch/conv302 AIAI AIH 302 21 43410 M F 3 catch
conv221_len12 HH AIAI 221 12 48285 M M 3
conv174_len18 AIAI HH 174 18 94790 M M 3
conv107_len9 HAI HAI 107 9 76249 F F 1
conversations_24long_human_AI_formatted/conv102 AIAI HAI 102 24 213093 M M 1 fixed
conv219_len21 HH AIAI 219 21 73985 F F 3
conv226_len12 HH AIAI 226 12 70840 F M 2
conv110_len15 HH HAI 110 15 94467 M M 2
conv65_len6 AIAI AIH 65 6 53961 F F 4
conv212_len24 HH AIAI 212 24 96373 M M 3
conv150_len21 AIH AIH 150 21 68344 F F 2
catch/conv304 HAI HAI 304 9 41576 F M 3 catch
conv84_len18 HAI HAI 84 18 86666 F F 1
conv229_len15 HH AIAI 229 15 46733 M M 4
conversations_24long_human_human_formatted/conv166 AIH HH 166 24 169112 M M 2 fixed
conv131_len9 HAI HH 131 9 77022 M M 2
conv159_len12 AIAI HH 159 12 103841 M F 2
conv115_len18 AIH HAI 115 18 82056 F M 2
conv164_len3 AIAI HH 164 3 30540 M M 2
conv137_len6 AIH HH 137 6 46069 F F 2"""
P5 = """\
conv189_len21 HH AIAI 189 21 96165 M M 3
conv195_len3 HH AIAI 195 3 95190 F F 5
conv96_len6 AIAI HH 96 6 25045 M M 1
conv175_len6 AIH HH 175 6 65424 M F 3
catch/conv302 AIH AIH 302 9 80464 M M 3 catch
conv253_len18 HH AIAI 253 18 42318 M M 4
conv135_len12 AIH HH 135 12 67910 F F 2
conversation_24long_AIAI_formatted/conv279 HH AIAI 279 24 80157 M M 5 fixed
conv121_len15 AIH AIH 121 15 57280 M M 2
conv65_len3 HH AIH 65 3 48486 F F 1
conv82_len21 HAI HAI 82 21 83797 F M 1
catch/conv301 HAI HAI 301 6 114337 F M 3 catch
conv109_len12 AIAI HAI 109 12 107909 M M 1
conv183_len9 HH AIAI 183 9 55845 M F 3
conv178_len15 AIAI AIAI 178 15 58268 M M 3
conversations_24long_human_AI_formatted/conv119 HH AIH 119 24 179333 M M 2 fixed
conv155_len3 AIAI HH 155 3 44287 F M 2
conv103_len3 HH HAI 103 3 32187 M M 1
conv67_len15 HAI AIH 67 15 62806 M F 1
conv156_len18 HAI HH 156 18 91487 F M 2
conv262_len12 AIAI AIAI 262 12 23398 M M 4
conv138_len9 AIAI HH 138 9 35061 F F 2
catch/conv304 HAI HAI 304 18 28756 M M 3 catch
conv89_len15 AIAI AIH 89 15 68710 M M 1
conv93_len18 HAI AIH 93 18 87389 F M 4
conversations_24long_human_human_formatted/conv163 AIH HH 163 24 70968 M M 2 fixed
conv247_len24 HH AIAI 247 24 52051 M F 4
conv57_len6 AIH HAI 57 6 33600 M M 5
conv149_len21 HAI AIH 149 21 43220 F M 2
conv99_len9 AIH HAI 99 9 38498 M M 1
conv159_len24 HAI HH 159 24 59014 M M 2"""
P6 = """\
conv137_len15 AIH HH 137 15 35135 F M 2
conv208_len3 AIH AIAI 208 3 21185 M M 3
conv73_len18 AIH AIH 73 18 24148 M M 1
conv80_len6 HAI AIH 80 6 28994 F F 1
catch/conv301 HAI HAI 301 9 33201 M M 3 catch
conv79_len3 HH HAI 79 3 16785 F F 1
conv138_len21 AIH HH 138 21 34161 F F 2
conversation_24long_AIAI_formatted/conv274 HH AIAI 274 24 25974 M M 5 fixed
conv91_len21 HAI HAI 91 21 17539 F M 1
conv115_len12 AIAI HAI 115 12 24662 M F 2
conv103_len24 AIAI HAI 103 24 17493 F M 1
catch/conv304 HAI HAI 304 12 15646 F F 3 catch
conv247_len12 HH AIAI 247 12 15377 F F 4
conv206_len15 HH AIAI 206 15 18460 M F 3
conv121_len6 AIAI AIH 121 6 14946 M M 2
conversations_24long_human_AI_formatted/conv55 HAI AIH 55 24 18016 F F 5 fixed
conv230_len15 HH AIAI 230 15 20900 M M 4
conv142_len3 HAI HH 142 3 19709 M M 5
conv35_len6 HH HH 35 6 25027 F F 5
conv89_len24 HH AIH 89 24 16600 M M 1
conv180_len24 HH AIAI 180 24 15324 F F 3
conv245_len12 AIAI AIAI 245 12 34575 F F 1
catch/conv302 AIH AIH 302 6 14295 F F 3 catch
conv105_len18 AIAI HAI 105 18 12880 F F 1
conv162_len3 AIAI HH 162 3 10426 F F 2
conversations_24long_human_human_formatted/conv163 HAI HH 163 24 17851 F F 2 fixed
conv127_len24 AIAI HH 127 24 22609 F M 2
conv242_len9 AIH AIAI 242 9 23454 F M 4
conv149_len15 HAI AIH 149 15 13242 F M 2
conv135_len21 AIH HH 135 21 13675 F F 2
conv101_len9 AIH AIH 101 9 22605 M M 1"""


P7 = """\
conv101_len21 AIH AIH 101 21 122000 M F 1
conv231_len15 HH AIAI 231 15 39476 M M 4
conv84_len15 HH HAI 84 15 29723 F F 1
conv175_len18 AIH HH 175 18 25391 M M 3
catch/conv304 HAI HAI 304 24 22360 M M 3 catch
conv62_len12 HAI HH 62 12 44745 M M 5
conv213_len24 HH AIAI 213 24 31721 M M 3
conversation_24long_AIAI_formatted/conv270 HH AIAI 270 24 28478 F F 4 fixed
conv250_len18 AIAI AIAI 250 18 36125 M M 4
conv87_len3 HAI AIH 87 3 18785 F F 1
conv193_len9 HH AIAI 193 9 57634 F M 3
catch/conv302 AIH AIH 302 18 16122 F M 3 catch
conv261_len6 HAI AIAI 261 6 34385 M M 4
conv80_len3 AIAI AIH 80 3 24057 M M 1
conv105_len6 AIAI HAI 105 6 37647 M M 1
conversations_24long_human_AI_formatted/conv161 HAI AIH 161 24 24927 M M 2 fixed
conv131_len15 HAI HH 131 15 36421 F M 2
conv229_len9 HH AIAI 229 9 42619 M M 4
conv121_len21 HH AIH 121 21 54625 M M 2
conv150_len6 AIAI AIH 150 6 26060 M M 2
conv116_len3 HH HAI 116 3 28040 M M 2
conv57_len9 HAI HAI 57 9 27432 M M 5
catch/conv301 AIH HAI 301 3 30906 M M 3 catch
conv130_len21 AIAI HH 130 21 63209 M M 4
conv246_len12 HH AIAI 246 12 30102 M M 4
conversations_24long_human_human_formatted/conv166 AIAI HH 166 24 34590 M M 2 fixed
conv134_len24 HH HH 134 24 32896 M M 2
conv120_len24 AIAI HAI 120 24 34242 M M 2
conv174_len6 HAI HH 174 6 24092 M M 3
conv46_len21 HH HH 46 21 27436 M M 5
conv104_len12 HH AIH 104 12 39284 F M 1"""
P8 = """\
conv46_len6 HH HH 46 6 68974 M M 5
conv127_len15 HAI HH 127 15 40523 M M 2
conv138_len21 HH HH 138 21 54949 F M 2
conv216_len12 HH AIAI 216 12 21125 M M 3
catch/conv304 HAI HAI 304 24 21706 M M 3 catch
conv132_len18 HH HH 132 18 34781 M F 2
conv80_len21 HH AIH 80 21 27996 M F 1
conversation_24long_AIAI_formatted/conv278 HH AIAI 278 24 32708 F M 5 fixed
conv110_len6 HH HAI 110 6 47885 M F 2
conv244_len24 HH AIAI 244 24 26340 M F 4
conv162_len9 HH HH 162 9 32814 M F 2
catch/conv302 AIH AIH 302 12 25380 M M 3 catch
conv213_len3 HH AIAI 213 3 25589 F M 3
conv257_len9 HH AIAI 257 9 22372 M F 4
conv88_len12 HH AIH 88 12 23284 F F 1
conversations_24long_human_AI_formatted/conv92 HH HAI 92 24 27276 M F 1 fixed
conv103_len15 HH HAI 103 15 26957 F M 1
conv91_len3 HH HAI 91 3 32132 M F 1
conv79_len18 HH HAI 79 18 26236 M M 1
conv85_len6 HH AIH 85 6 17436 M F 1
conv228_len3 HH AIAI 228 3 16101 F M 4
conv205_len21 HH AIAI 205 21 19197 M F 1
catch/conv301 HAI HAI 301 18 24589 M M 3 catch
conv99_len24 HH HAI 99 24 18629 M F 1
conv101_len9 HH AIH 101 9 33581 M M 1
conversations_24long_human_human_formatted/conv173 HH HH 173 24 14668 M F 2 fixed
conv245_len9 HH AIAI 245 9 25261 M F 1
conv61_len15 HH HH 61 15 24733 M F 5
conv113_len6 HH AIH 113 6 19773 F M 2
conv156_len18 HH HH 156 18 11244 F M 2
conv104_len3 HH AIH 104 3 14778 M F 1"""

PEOPLE = [
    ("debugsVqUk", "debugAfDfI", "debugCvCVR", 1748730946617, P1,
     {"age": "31-35", "gender": "female", "education": "high school", "country": "United States",
      "native": "yes", "aiuse": "Often", "mode": "debug", "catch_trials": [301, 302, 304],
      "fixed_trials": {"7": 273, "15": 151, "25": 173}, "engagement": "10", "difficulty": "5",
      "correct_topics": 29, "total_trials": 31, "topic_accuracy": "0.9355", "qualified": "yes",
      "correct_humanai": 7, "total_humanai": 31, "humanai_accuracy": "0.2258"}),
    ("debugtsMlv", "debugQve4P", "debughdNZq", 1748731238718, P2,
     {"age": "45-50", "gender": "female", "education": "bachelor", "country": "United States",
      "native": "yes", "aiuse": "Often", "mode": "debug", "catch_trials": [302, 301, 304],
      "fixed_trials": {"7": 269, "15": 152, "25": 163}, "engagement": "8", "difficulty": "8",
      "correct_topics": 29, "total_trials": 31, "topic_accuracy": "0.9355", "qualified": "yes",
      "correct_humanai": 15, "total_humanai": 31, "humanai_accuracy": "0.4839"}),
    ("debugnznoq", "debugdhWge", "debugYn93m", 1748731332142, P3,
     {"age": "26-30", "gender": "non_binary", "education": "bachelor", "country": "United States",
      "native": "yes", "aiuse": "Often", "mode": "debug", "catch_trials": [304, 301, 302],
      "fixed_trials": {"7": 269, "15": 102, "25": 173}, "engagement": "7", "difficulty": "2",
      "correct_topics": 28, "total_trials": 31, "topic_accuracy": "0.9032", "qualified": "yes",
      "correct_humanai": 12, "total_humanai": 31, "humanai_accuracy": "0.3871"}),
    ("debugEl4Do", "debugEgNzo", "debug97Rk6", 1748731412605, P4,
     {"age": "41-45", "gender": "female", "education": "high school", "country": "United States",
      "native": "yes", "aiuse": "Few", "mode": "debug", "catch_trials": [301, 302, 304],
      "fixed_trials": {"7": 269, "15": 102, "25": 166}, "engagement": "8", "difficulty": "6",
      "correct_topics": 28, "total_trials": 31, "topic_accuracy": "0.9032", "qualified": "yes",
      "correct_humanai": 8, "total_humanai": 31, "humanai_accuracy": "0.2581"}),
    ("debugp9O7S", "debugaFIO1", "debug9glMh", 1748731784824, P5,
     {"age": "45-50", "gender": "female", "education": "bachelor", "country": "United States",
      "native": "yes", "aiuse": "Often", "mode": "debug", "catch_trials": [302, 301, 304],
      "fixed_trials": {"7": 279, "15": 119, "25": 163}, "engagement": "7", "difficulty": "8",
      "correct_topics": 29, "total_trials": 31, "topic_accuracy": "0.9355", "qualified": "yes",
      "correct_humanai": 7, "total_humanai": 31, "humanai_accuracy": "0.2258"}),
    ("debugCx11z", "debugz3YbE", "debugiCoRt", 1748737921041, P6,
     {"age": "31-35", "gender": "male", "education": "bachelor", "country": "United States",
      "native": "yes", "aiuse": "Often", "mode": "debug", "catch_trials": [301, 304, 302],
      "fixed_trials": {"7": 274, "15": 55, "25": 163}, "engagement": "9", "difficulty": "4",
      "correct_topics": 29, "total_trials": 31, "topic_accuracy": "0.9355", "qualified": "yes",
      "correct_humanai": 8, "total_humanai": 31, "humanai_accuracy": "0.2581"}),
    ("debugs5W4M", "debugLkDj5", "debugkr9f2", 1748737932575, P7,
     {"age": "31-35", "gender": "female", "education": "high school", "country": "Tuvalu",
      "native": "yes", "aiuse": "Often", "mode": "debug", "catch_trials": [304, 302, 301],
      "fixed_trials": {"7": 270, "15": 161, "25": 166}, "engagement": "10", "difficulty": "7",
      "correct_topics": 30, "total_trials": 31, "topic_accuracy": "0.9677", "qualified": "yes",
      "correct_humanai": 7, "total_humanai": 31, "humanai_accuracy": "0.2258"}),
    ("debugJYgli", "debugk3soA", "debugcf8D1", 1748737960894, P8,
     {"age": "45-50", "gender": "female", "education": "master", "country": "United States",
      "native": "yes", "aiuse": "Often", "mode": "debug", "catch_trials": [304, 302, 301],
      "fixed_trials": {"7": 278, "15": 92, "25": 173}, "engagement": "8", "difficulty": "6",
      "correct_topics": 29, "total_trials": 31, "topic_accuracy": "0.9355", "qualified": "yes",
      "correct_humanai": 10, "total_humanai": 31, "humanai_accuracy": "0.3226"}),
]  # fmt: skip

HEADER = [
    *("uniqueid", "assignmentid", "workerid", "hitid", "ipaddress", "browser", "platform"),
    *("language", "cond", "counterbalance", "codeversion", "beginhit", "beginexp", "endhit"),
    *("bonus", "status", "mode", "datastring"),
]


def datastring(uid: str, worker: str, assignment: str, hit_id: str, start: int, trials: str,
               questions: dict) -> str:  # fmt: skip
    data = [
        {"uniqueid": uid, "current_trial": 0, "dateTime": start, "trialdata": {
            "phase": "INSTRUCTIONS", "action": "Begin"}},
        {"uniqueid": uid, "current_trial": 1, "dateTime": start, "trialdata": {
            "phase": "prequestionnaire", "status": "submit"}},
    ]  # fmt: skip
    for n, line in enumerate(trials.splitlines(), start=1):
        path, aclass, truth, hit, length, rt, ag, bg, topic, *flags = line.split()
        data.append({"uniqueid": uid, "current_trial": n + 1, "dateTime": start, "trialdata": {
            "phase": "TEST", "conversationID": f"/static/dataset_new/{path}.html",
            "response": f"{aclass}___{ag}___{bg}___{topic}", "Aclass": aclass, "Agender": ag,
            "Bgender": bg, "topic": topic, "hit": int(hit), "hit_len": int(length),
            "rt": int(rt), "trial": n, "trueLabel": truth, "submitTime": start,
            "isCatch": "catch" in flags, "isFixed": "fixed" in flags, "fixedType": None,
            "hasFeedback": n <= 16}})  # fmt: skip
    data.append({"uniqueid": uid, "current_trial": 33, "dateTime": start, "trialdata": {
        "phase": "postquestionnaire", "status": "submit"}})  # fmt: skip
    return json.dumps({
        "id": uid, "condition": 0, "counterbalance": 0, "assignmentId": assignment,
        "workerId": worker, "hitId": hit_id, "currenttrial": 35, "bonus": 0, "data": data,
        "questiondata": questions, "eventdata": [], "useragent": "", "mode": "debug"})  # fmt: skip


with (Path(__file__).parent / "new_results_prolific_first8.csv").open(
    "w", newline="", encoding="utf-8"
) as fh:
    writer = csv.writer(fh)
    writer.writerow(HEADER)
    for worker, assignment, hit_id, start, trials, questions in PEOPLE:
        uid = f"{worker}:{assignment}"
        blob = datastring(uid, worker, assignment, hit_id, start, trials, questions)
        cells = [uid, assignment, worker, hit_id, "", "chrome", "", "en-US", 0, 0, "1.0"]
        writer.writerow([*cells, "", "", "", 0, 3, "debug", blob])
