"""Run the scripted answer-question flow in this process (as `geoask ask` does); print JSON.

Usage: python tests/service/run_direct.py "QUESTION"   (PREFECT_API_URL names the server)
"""

from __future__ import annotations

import json
import sys
import time

from scripted_flow import answer_question

if __name__ == "__main__":
    begin = time.perf_counter()
    result = answer_question(sys.argv[1])
    print(json.dumps({"seconds": time.perf_counter() - begin,
                      "result": result.model_dump(mode="json")}))
