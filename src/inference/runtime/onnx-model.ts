/**
 * Serialised ONNX models for the small graphs the service builds itself (the label
 * product of a classifier pack), encoded by protobufjs from the subset of onnx.proto3
 * they use. Field numbers are onnx.proto3's; a model built here loads in any ONNX
 * runtime.
 */
import protobuf from 'protobufjs';

const SCHEMA = `
syntax = "proto3";
package onnx;
message AttributeProto {
  enum AttributeType { UNDEFINED = 0; FLOAT = 1; INT = 2; STRING = 3; TENSOR = 4; GRAPH = 5; FLOATS = 6; INTS = 7; }
  string name = 1;
  float f = 2;
  int64 i = 3;
  repeated int64 ints = 8;
  AttributeType type = 20;
}
message TensorProto {
  repeated int64 dims = 1;
  int32 data_type = 2;
  string name = 8;
  bytes raw_data = 9;
}
message TensorShapeProto {
  message Dimension { oneof value { int64 dim_value = 1; string dim_param = 2; } }
  repeated Dimension dim = 1;
}
message TypeProto {
  message Tensor { int32 elem_type = 1; TensorShapeProto shape = 2; }
  oneof value { Tensor tensor_type = 1; }
}
message ValueInfoProto { string name = 1; TypeProto type = 2; }
message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  string name = 3;
  string op_type = 4;
  repeated AttributeProto attribute = 5;
  string domain = 7;
}
message GraphProto {
  repeated NodeProto node = 1;
  string name = 2;
  repeated TensorProto initializer = 5;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
}
message OperatorSetIdProto { string domain = 1; int64 version = 2; }
message ModelProto {
  int64 ir_version = 1;
  string producer_name = 2;
  string producer_version = 3;
  GraphProto graph = 7;
  repeated OperatorSetIdProto opset_import = 8;
}
`;

let modelType: protobuf.Type | null = null;
const ModelProto = (): protobuf.Type => (modelType ??= protobuf.parse(SCHEMA, { keepCase: true }).root.lookupType('onnx.ModelProto'));

/** TensorProto.DataType: the one element type these graphs use. */
const FLOAT = 1;
/** IR version 8 with opset 17: what onnxruntime-node has loaded for years. */
const IR_VERSION = 8;
const OPSET = 17;

export interface Float32Initializer {
  name: string;
  dims: readonly number[];
  data: Float32Array;
}

/** A float32 graph input or output; a string dimension is symbolic (a batch size). */
export interface Float32Value {
  name: string;
  shape: readonly (number | string)[];
}

export interface NodeSpec {
  op: string;
  inputs: readonly string[];
  outputs: readonly string[];
  /** Integer attributes (the only kind these graphs set). */
  ints?: Readonly<Record<string, number>>;
}

export interface GraphSpec {
  name: string;
  nodes: readonly NodeSpec[];
  initializers: readonly Float32Initializer[];
  inputs: readonly Float32Value[];
  outputs: readonly Float32Value[];
}

const valueInfo = (v: Float32Value) => ({
  name: v.name,
  type: {
    tensor_type: {
      elem_type: FLOAT,
      shape: { dim: v.shape.map((d) => (typeof d === 'number' ? { dim_value: d } : { dim_param: d })) },
    },
  },
});

/** The ModelProto bytes of `graph`. */
export function encodeOnnxModel(graph: GraphSpec): Uint8Array {
  const type = ModelProto();
  const model = type.fromObject({
    ir_version: IR_VERSION,
    producer_name: 'sluice',
    graph: {
      name: graph.name,
      node: graph.nodes.map((n, k) => ({
        input: n.inputs,
        output: n.outputs,
        name: `${n.op}_${k}`,
        op_type: n.op,
        attribute: Object.entries(n.ints ?? {}).map(([name, i]) => ({ name, i, type: 'INT' })),
      })),
      initializer: graph.initializers.map((t) => ({
        name: t.name,
        dims: t.dims,
        data_type: FLOAT,
        // ONNX raw data is little-endian, as a Float32Array is on every platform onnxruntime-node ships for (x64, arm64).
        raw_data: new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength),
      })),
      input: graph.inputs.map(valueInfo),
      output: graph.outputs.map(valueInfo),
    },
    opset_import: [{ domain: '', version: OPSET }],
  });
  return type.encode(model).finish();
}
