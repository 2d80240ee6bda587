@_exported import GQLCore
