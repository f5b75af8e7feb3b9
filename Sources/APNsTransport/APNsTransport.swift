// APNsTransport
