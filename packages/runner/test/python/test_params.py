import json
import os
import unittest

from mm_runner.params import ParameterError, parse_parameters

CASES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "parameter-cases.json")


class ParameterFileTest(unittest.TestCase):
    def test_the_same_verdicts_as_the_server(self):
        """parameter-cases.json is checked by the server's zod schema too (parameter-file.unit.test.ts)."""
        with open(CASES) as f:
            cases = json.load(f)["cases"]
        for case in cases:
            text = json.dumps(case["file"])
            with self.subTest(text=text):
                if case.get("valid"):
                    parse_parameters(text)
                else:
                    with self.assertRaises(ParameterError) as got:
                        parse_parameters(text)
                    self.assertEqual(got.exception.path, case["path"])

    def test_defaults(self):
        p = parse_parameters('{"schema":"mm-runner/1","task":"detection","detection":{"family":"yolox"}}')
        self.assertEqual(p["preprocess"], {"resize": "stretch", "mean": [0, 0, 0], "scale": [1, 1, 1], "channels": "bgr"})
        self.assertEqual(p["run"], {"threads": 2, "warmup": 5, "repeat": 1})
        self.assertEqual(p["output"], {"overlay": True, "codec": "h264"})
        self.assertEqual(p["detection"], {"family": "yolox", "conf": 0.25, "nms": 0.45})

    def test_not_a_runner_file(self):
        for text, path in (("nope", "$"), ("[]", "$"), ('{"duration_s": 1}', "$.schema")):
            with self.assertRaises(ParameterError) as got:
                parse_parameters(text)
            self.assertEqual(got.exception.path, path)


if __name__ == "__main__":
    unittest.main()
