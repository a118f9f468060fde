# ruff: noqa: E501 - BibTeX entries are data, one field a line
"""The references a bundle's methods text may cite, as BibTeX; only those cited are written."""
from __future__ import annotations

REFERENCES = {
    "krippendorff2004": """@book{krippendorff2004,
  author = {Krippendorff, Klaus},
  title = {Content Analysis: An Introduction to Its Methodology},
  edition = {2nd},
  publisher = {Sage},
  address = {Thousand Oaks, CA},
  year = {2004}
}""",
    "efron1993": """@book{efron1993,
  author = {Efron, Bradley and Tibshirani, Robert J.},
  title = {An Introduction to the Bootstrap},
  publisher = {Chapman \\& Hall},
  address = {New York},
  year = {1993}
}""",
    "holm1979": """@article{holm1979,
  author = {Holm, Sture},
  title = {A Simple Sequentially Rejective Multiple Test Procedure},
  journal = {Scandinavian Journal of Statistics},
  volume = {6},
  number = {2},
  pages = {65--70},
  year = {1979}
}""",
    "benjamini1995": """@article{benjamini1995,
  author = {Benjamini, Yoav and Hochberg, Yosef},
  title = {Controlling the False Discovery Rate: A Practical and Powerful Approach to Multiple Testing},
  journal = {Journal of the Royal Statistical Society: Series B (Methodological)},
  volume = {57},
  number = {1},
  pages = {289--300},
  year = {1995}
}""",
    "bradley1952": """@article{bradley1952,
  author = {Bradley, Ralph Allan and Terry, Milton E.},
  title = {Rank Analysis of Incomplete Block Designs: {I}. The Method of Paired Comparisons},
  journal = {Biometrika},
  volume = {39},
  number = {3/4},
  pages = {324--345},
  year = {1952}
}""",
    "davidson1970": """@article{davidson1970,
  author = {Davidson, Roger R.},
  title = {On Extending the {Bradley-Terry} Model to Accommodate Ties in Paired Comparison Experiments},
  journal = {Journal of the American Statistical Association},
  volume = {65},
  number = {329},
  pages = {317--328},
  year = {1970}
}""",
    "louviere2015": """@book{louviere2015,
  author = {Louviere, Jordan J. and Flynn, Terry N. and Marley, A. A. J.},
  title = {Best-Worst Scaling: Theory, Methods and Applications},
  publisher = {Cambridge University Press},
  address = {Cambridge},
  year = {2015}
}""",
    "lommel2014": """@article{lommel2014,
  author = {Lommel, Arle and Uszkoreit, Hans and Burchardt, Aljoscha},
  title = {Multidimensional Quality Metrics ({MQM}): A Framework for Declaring and Describing Translation Quality Metrics},
  journal = {Tradum{\\`a}tica},
  number = {12},
  pages = {455--463},
  year = {2014}
}""",
    "freitag2021": """@article{freitag2021,
  author = {Freitag, Markus and Foster, George and Grangier, David and Ratnakar, Viresh and Tan, Qijun and Macherey, Wolfgang},
  title = {Experts, Errors, and Context: A Large-Scale Study of Human Evaluation for Machine Translation},
  journal = {Transactions of the Association for Computational Linguistics},
  volume = {9},
  pages = {1460--1474},
  year = {2021}
}""",
    "kocmi2024esa": """@inproceedings{kocmi2024esa,
  author = {Kocmi, Tom and Zouhar, Vil{\\'e}m and Avramidis, Eleftherios and Grundkiewicz, Roman and Karpinska, Marzena and Popovi{\\'c}, Maja and Sachan, Mrinmaya and Shmatova, Mariya},
  title = {Error Span Annotation: A Balanced Approach for Human Evaluation of Machine Translation},
  booktitle = {Proceedings of the Ninth Conference on Machine Translation (WMT)},
  pages = {1440--1453},
  year = {2024}
}""",
    "dawid1979": """@article{dawid1979,
  author = {Dawid, A. P. and Skene, A. M.},
  title = {Maximum Likelihood Estimation of Observer Error-Rates Using the {EM} Algorithm},
  journal = {Journal of the Royal Statistical Society: Series C (Applied Statistics)},
  volume = {28},
  number = {1},
  pages = {20--28},
  year = {1979}
}""",
    "hovy2013": """@inproceedings{hovy2013,
  author = {Hovy, Dirk and Berg-Kirkpatrick, Taylor and Vaswani, Ashish and Hovy, Eduard},
  title = {Learning Whom to Trust with {MACE}},
  booktitle = {Proceedings of the 2013 Conference of the North American Chapter of the Association for Computational Linguistics: Human Language Technologies},
  pages = {1120--1130},
  year = {2013}
}""",
    "howcroft2020": """@inproceedings{howcroft2020,
  author = {Howcroft, David M. and Belz, Anya and Clinciu, Miruna-Adriana and Gkatzia, Dimitra and Hasan, Sadid A. and Mahamood, Saad and Mille, Simon and van Miltenburg, Emiel and Santhanam, Sashank and Rieser, Verena},
  title = {Twenty Years of Confusion in Human Evaluation: {NLG} Needs Evaluation Sheets and Standardised Definitions},
  booktitle = {Proceedings of the 13th International Conference on Natural Language Generation},
  pages = {169--182},
  year = {2020}
}""",
    "vanderlee2021": """@article{vanderlee2021,
  author = {van der Lee, Chris and Gatt, Albert and van Miltenburg, Emiel and Krahmer, Emiel},
  title = {Human Evaluation of Automatically Generated Text: Current Trends and Best Practice Guidelines},
  journal = {Computer Speech \\& Language},
  volume = {67},
  pages = {101151},
  year = {2021}
}""",
    "shimorina2022": """@inproceedings{shimorina2022,
  author = {Shimorina, Anastasia and Belz, Anya},
  title = {The Human Evaluation Datasheet: A Template for Recording Details of Human Evaluation Experiments in {NLP}},
  booktitle = {Proceedings of the 2nd Workshop on Human Evaluation of NLP Systems (HumEval)},
  pages = {54--75},
  year = {2022}
}""",
}


def bibtex(keys: list[str]) -> str:
    """The entries of `keys`, in the order first cited."""
    return "\n\n".join(REFERENCES[k] for k in dict.fromkeys(keys)) + "\n"
