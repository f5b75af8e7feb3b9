@_exported import PushTestSupport
