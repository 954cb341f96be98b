import { DefinitionsScreen } from './Definitions'

export default function EventDefinitions() {
  return <DefinitionsScreen kind="event" />
}
