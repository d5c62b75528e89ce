from skill_engine.gen.skillengine.v1 import composition_pb2 as _composition_pb2
from skill_engine.gen.skillengine.v1 import environments_pb2 as _environments_pb2
from skill_engine.gen.skillengine.v1 import execution_pb2 as _execution_pb2
from skill_engine.gen.skillengine.v1 import learning_pb2 as _learning_pb2
from skill_engine.gen.skillengine.v1 import lifecycle_pb2 as _lifecycle_pb2
from skill_engine.gen.skillengine.v1 import operations_pb2 as _operations_pb2
from skill_engine.gen.skillengine.v1 import registration_pb2 as _registration_pb2
from skill_engine.gen.skillengine.v1 import retirement_pb2 as _retirement_pb2
from skill_engine.gen.skillengine.v1 import routing_pb2 as _routing_pb2
from skill_engine.gen.skillengine.v1 import secrets_pb2 as _secrets_pb2
from skill_engine.gen.skillengine.v1 import sharing_pb2 as _sharing_pb2
from skill_engine.gen.skillengine.v1 import skills_pb2 as _skills_pb2
from skill_engine.gen.skillengine.v1 import sources_pb2 as _sources_pb2
from google.protobuf import descriptor as _descriptor
from typing import ClassVar as _ClassVar

DESCRIPTOR: _descriptor.FileDescriptor
