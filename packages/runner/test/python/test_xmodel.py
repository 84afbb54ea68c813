import os
import tempfile
import unittest

import xir
from mm_dpu_sim import build
from mm_dpu_sim.protobuf import DecodeError
from mm_dpu_sim.xmodel import load, parse, serialize


class XmodelTest(unittest.TestCase):
    def write(self, data):
        fd, path = tempfile.mkstemp(suffix=".xmodel")
        os.write(fd, data)
        os.close(fd)
        self.addCleanup(os.unlink, path)
        return path

    def test_round_trip(self):
        g = parse(serialize(build.yolo("yolov5", 320, 256, classes=3, dpu_ms=7.5, fingerprint=0xFFFFFFFFFFFFFFF0)))
        self.assertEqual(g.name, "yolov5")
        self.assertEqual(g.attrs["mm_sim_model"], "yolov5")
        self.assertEqual(g.attrs["mm_sim_dpu_ms"], 7.5)
        dpu = [c for c in g.root.children if c.attrs.get("device") == "DPU"][0]
        self.assertEqual(dpu.attrs["dpu_fingerprint"], 0xFFFFFFFFFFFFFFF0)
        self.assertEqual(dpu.attrs["dpu_name"], "DPUCZDX8G_ISA1_B4096")
        self.assertEqual(dpu.attrs["mc_code"].size, 64)
        ins = g.input_tensors(dpu)
        self.assertEqual([(t.name, t.dims, t.dtype, t.attrs["fix_point"]) for t in ins], [("input", [1, 256, 320, 3], "xint8", 7)])
        outs = g.output_tensors(dpu)
        self.assertEqual([(t.name, t.dims) for t in outs], [("head_s08", [1, 32, 40, 24]), ("head_s16", [1, 16, 20, 24]), ("head_s32", [1, 8, 10, 24])])

    def test_the_xir_stand_in_reads_a_file_as_the_runtime_does(self):
        path = self.write(serialize(build.classifier(224, 224, classes=10)))
        g = xir.Graph.deserialize(path)
        root = g.get_root_subgraph()
        self.assertFalse(root.is_leaf)
        children = root.toposort_child_subgraph()
        self.assertEqual([c.get_attr("device") for c in children], ["USER", "DPU"])
        dpu = children[1]
        self.assertEqual(dpu.get_input_tensors()[0].get_attr("fix_point"), 7)
        self.assertEqual(dpu.get_output_tensors()[0].dims, [1, 10])

    def test_children_in_topological_order(self):
        g = build.classifier()
        g.root.children.reverse()  # DPU first in the file; it reads the USER subgraph's input
        order = parse(serialize(g)).toposort_children(parse(serialize(g)).root)
        self.assertEqual([c.name for c in order], ["subgraph_input", "subgraph_body"])

    def test_corrupt_files_are_refused(self):
        data = serialize(build.classifier())
        for bad in (data[: len(data) // 2], b"\xff" * 64, b"not an xmodel at all"):
            with self.assertRaises((DecodeError, UnicodeDecodeError)):
                parse(bad)
        with self.assertRaises(RuntimeError) as got:
            xir.Graph.deserialize(self.write(data[:-7]))
        self.assertIn("XIR_PROTOBUF_LOAD_FAILURE", str(got.exception))
        with self.assertRaises(RuntimeError):
            xir.Graph.deserialize(self.write(b""))

    def test_reads_a_large_model_without_copying_its_weights(self):
        g = build.classifier()
        g.ops["body"].attrs["weights"] = b"\x01" * (8 * 1024 * 1024)
        path = self.write(serialize(g))
        parsed = load(path)
        self.assertEqual(parsed.ops["body"].attrs["weights"].size, 8 * 1024 * 1024)


if __name__ == "__main__":
    unittest.main()
